/**
 * scripts/server-stack.sh (the production server built from source, run by `npm run test:server`) and
 * docker-compose.yml run the same Temporal: the same pinned versions, the same server config file and
 * dynamic config, the same search attributes. The script reads the versions from the compose file; this
 * checks what it reads and that every setting compose passes is one the config file uses.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { MAX_BUFFERED_QUERIES } from '../../../src/worker/dev-server';
import { PROJECT_ROOT } from '../../../src/project-root';

const ROOT = PROJECT_ROOT;
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

type Service = { image?: string; environment?: Record<string, string | number | null>; volumes?: string[] };
const composeText = read('docker-compose.yml');
const services = (parse(composeText, { merge: true }) as { services: Record<string, Service> }).services;

/** `${NAME:-default}` → default, as compose resolves it when NAME is unset. */
const withDefaults = (value: string): string =>
  value.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, _name: string, fallback?: string) => fallback ?? '');

const scriptConfig = (): Record<string, string> =>
  Object.fromEntries(
    execFileSync('bash', [path.join(ROOT, 'scripts', 'server-stack.sh'), 'config'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

describe('scripts/server-stack.sh and docker-compose.yml', () => {
  const config = scriptConfig();
  const temporal = services.temporal!;

  test('pin one server version and one UI version', () => {
    expect(config.TEMPORAL_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    expect(withDefaults(temporal.image!)).toBe(`temporalio/server:${config.TEMPORAL_VERSION}`);
    // The schema and setup tools come from the admin-tools image of the same server version.
    for (const name of ['temporal-schema', 'temporal-setup'])
      expect(withDefaults(services[name]!.image!)).toBe(`temporalio/admin-tools:${config.TEMPORAL_VERSION}`);
    expect(withDefaults(services['temporal-ui']!.image!)).toBe(`temporalio/ui:${config.TEMPORAL_UI_VERSION}`);
    // Every default the compose file gives a version variable is the same: no second pin to drift.
    const pins = [...composeText.matchAll(/\$\{(TEMPORAL_VERSION|TEMPORAL_UI_VERSION):-([^}]*)\}/g)];
    expect(pins.length).toBeGreaterThanOrEqual(3);
    for (const [, name, value] of pins) expect([name, value]).toEqual([name, config[name!]]);
  });

  test('start the server with the same config file and dynamic config', () => {
    const env = temporal.environment!;
    const configPath = String(env.TEMPORAL_SERVER_CONFIG_FILE_PATH);
    const mount = temporal.volumes!.find((v) => v.split(':')[1] === configPath);
    expect(mount).toBeDefined();
    expect(path.resolve(ROOT, mount!.split(':')[0]!)).toBe(config.SERVER_CONFIG);
    expect(config.SERVER_CONFIG).toBe(path.join(ROOT, 'deploy', 'temporal-server.yaml.tmpl'));

    const dynamicMount = temporal.volumes!.find((v) => v.endsWith(':/etc/temporal/config/dynamicconfig:ro'));
    const dynamicFile = path.join(
      path.resolve(ROOT, dynamicMount!.split(':')[0]!),
      path.basename(String(env.DYNAMIC_CONFIG_FILE_PATH)),
    );
    expect(dynamicFile).toBe(config.DYNAMIC_CONFIG);
  });

  test('every setting compose gives the server is one the config file reads', () => {
    const template = read('deploy/temporal-server.yaml.tmpl');
    expect(template.split('\n')[0]).toBe('# enable-template');
    const readByTemplate = new Set([...template.matchAll(/env "(\w+)"/g)].map((m) => m[1]));
    const passed = Object.keys(temporal.environment!).filter((k) => k !== 'TEMPORAL_SERVER_CONFIG_FILE_PATH');
    expect(passed.length).toBeGreaterThan(5);
    for (const name of passed) expect([name, readByTemplate.has(name)]).toEqual([name, true]);
    // The script passes the same names (and the port ones) to the binary.
    const script = read('scripts/server-stack.sh');
    for (const name of ['DB', 'POSTGRES_SEEDS', 'DB_PORT', 'POSTGRES_USER', 'POSTGRES_PWD', 'BIND_ON_IP'])
      expect(script).toContain(` ${name}=`);
    for (const name of [...script.matchAll(/\b([A-Z_]+_(?:GRPC|HTTP|MEMBERSHIP)_PORT)=/g)].map((m) => m[1]))
      expect([name, readByTemplate.has(name)]).toEqual([name, true]);
  });

  test('hold as many queries per workflow as the dev server', () => {
    const dynamic = parse(fs.readFileSync(config.DYNAMIC_CONFIG!, 'utf8')) as Record<
      string,
      { value: unknown }[]
    >;
    expect(dynamic['history.MaxBufferedQueryCount']).toEqual([
      { value: MAX_BUFFERED_QUERIES, constraints: {} },
    ]);
  });

  test('register the same search attributes', () => {
    expect(config.SAGA_SEARCH_ATTRIBUTES).toBe(
      services['temporal-setup']!.environment!.SAGA_SEARCH_ATTRIBUTES,
    );
  });
});
