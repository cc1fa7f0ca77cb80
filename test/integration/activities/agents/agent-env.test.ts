/**
 * Agents, checks, worktree setup and discovery commands run with an allow-listed
 * environment (never the worker's Temporal, Slack or webhook secrets); profile `env` values may be `${VAR}`
 * references resolved when the agent runs; saga.config.yaml refuses entries that would hand a worker secret
 * to an agent, and loadRunSettings keeps secret-looking literals out of what it returns (workflow history).
 * Real processes, real git.
 */
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createAgentActivities,
  type RunAgentInput,
  type RunAgentResult,
} from '../../../../src/activities/agents';
import { createDiscoveryActivities } from '../../../../src/activities/planning/discovery';
import { createGitActivities } from '../../../../src/activities/git';
import { createSagaSetupActivities } from '../../../../src/activities/planning/saga-setup';
import { createValidationActivities, type RunChecksResult } from '../../../../src/activities/validation';
import { CONFIG_SECRET_REFERENCE } from '../../../../src/domain/config/agent-env';
import { DEFAULT_SAGA_CONFIG } from '../../../../src/domain/config/config';
import {
  resolveAgentProfile,
  type ResolvedAgentProfile,
} from '../../../../src/domain/config/profile-resolution';
import { parseSagaConfigText } from '../../../../src/domain/config/config-text';

const newEnv = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });

/** What the worker's environment holds besides the usual: its own secrets and some unrelated variables. */
const WORKER_SECRETS = {
  TEMPORAL_API_KEY: 'temporal-key-do-not-leak',
  SAGA_WEBHOOK_SECRET: 'webhook-secret-do-not-leak',
  SLACK_BOT_TOKEN: 'xoxb-do-not-leak',
};
const WORKER_EXTRAS = {
  MY_TOKEN: 'passed-by-name',
  MY_API_KEY: 'sk-referenced-value',
  UNLISTED_VARIABLE: 'not-asked-for',
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:1/claude-own-setting',
};
const ALL = { ...WORKER_SECRETS, ...WORKER_EXTRAS };

/** A node one-liner that writes its whole environment as JSON to `file`. */
const dumpEnv = (file: string) =>
  `require('fs').writeFileSync(${JSON.stringify(file)}, JSON.stringify(process.env))`;

let dir: string;
let saved: Record<string, string | undefined>;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-agent-env-'));
  saved = Object.fromEntries(Object.keys(ALL).map((k) => [k, process.env[k]]));
  Object.assign(process.env, ALL);
});
afterEach(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await fs.rm(dir, { recursive: true, force: true });
});

const readDump = async (file: string) =>
  JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, string>;

function expectNoWorkerSecrets(env: Record<string, string>) {
  for (const name of Object.keys(WORKER_SECRETS)) expect(env[name]).toBeUndefined();
  const text = JSON.stringify(env);
  for (const value of Object.values(WORKER_SECRETS)) expect(text).not.toContain(value);
  expect(env.UNLISTED_VARIABLE).toBeUndefined();
}

describe('agent environment', () => {
  const demo = resolveAgentProfile(DEFAULT_SAGA_CONFIG, 'demo');
  const profileDumping = (
    file: string,
    overrides: Partial<ResolvedAgentProfile> = {},
  ): ResolvedAgentProfile => ({
    ...demo,
    name: 'env-dump',
    command: ['{node}', '-e', dumpEnv(file)],
    timeoutMs: 30_000,
    idleTimeoutMs: 30_000,
    env: {
      PROFILE_SETTING: 'from-profile',
      MY_API_KEY: '${MY_API_KEY}',
      URL: 'http://${UNLISTED_VARIABLE}/x',
    },
    passEnv: ['MY_TOKEN'],
    ...overrides,
  });
  const input = (profile: ResolvedAgentProfile): RunAgentInput => ({
    sagaName: 'env-saga',
    sagaDir: path.join(dir, 'saga'),
    role: 'implementer',
    stage: 'implement',
    taskId: '1.1',
    attempt: 1,
    profile,
    prompt: 'Dump the environment.',
    workdir: dir,
    extraEnv: { SAGA_PORT_BASE: '4100' },
    runLabel: 'm1t1-a1',
  });

  test('sees SAGA_*, its profile env with references resolved, pass_env and base variables; no worker secrets', async () => {
    const out = path.join(dir, 'agent-env.json');
    const { runAgent } = createAgentActivities({ sagaHome: path.join(dir, 'saga'), profilesFromInput: true });
    const result = (await newEnv().run(runAgent, input(profileDumping(out)))) as RunAgentResult;
    expect(result.exitCode).toBe(0);
    const env = await readDump(out);
    expect(env).toMatchObject({
      SAGA_TASK_ID: '1.1',
      SAGA_NAME: 'env-saga',
      SAGA_PORT_BASE: '4100',
      PROFILE_SETTING: 'from-profile',
      MY_API_KEY: 'sk-referenced-value',
      // A reference resolves from the worker's environment even when the name is not passed itself.
      URL: 'http://not-asked-for/x',
      MY_TOKEN: 'passed-by-name',
      PATH: process.env.PATH,
      HOME: process.env.HOME,
    });
    expectNoWorkerSecrets(env);
    // Another CLI's settings are not this profile's business.
    expect(env.ANTHROPIC_BASE_URL).toBeUndefined();
  });

  test("a preset's CLI gets its own variables (by profile name or by program)", async () => {
    const out = path.join(dir, 'claude-env.json');
    const { runAgent } = createAgentActivities({ sagaHome: path.join(dir, 'saga'), profilesFromInput: true });
    // A user profile running a program called `claude` (here a shell script standing in for it).
    const bin = path.join(dir, 'bin');
    await fs.mkdir(bin);
    await fs.writeFile(path.join(dir, 'dump.js'), dumpEnv(out));
    await fs.writeFile(path.join(bin, 'claude'), `#!/bin/sh\nexec "${process.execPath}" "${dir}/dump.js"\n`, {
      mode: 0o755,
    });
    const profile = profileDumping(out, {
      name: 'mine',
      command: [path.join(bin, 'claude')],
      env: {},
      passEnv: [],
    });
    const result = (await newEnv().run(runAgent, input(profile))) as RunAgentResult;
    expect(result.exitCode).toBe(0);
    const env = await readDump(out);
    expect(env.ANTHROPIC_BASE_URL).toBe(WORKER_EXTRAS.ANTHROPIC_BASE_URL);
    expect(env.MY_TOKEN).toBeUndefined();
    expectNoWorkerSecrets(env);
  });

  test('a reference to a variable the worker does not have fails without retries, naming it', async () => {
    const { runAgent } = createAgentActivities({ sagaHome: path.join(dir, 'saga'), profilesFromInput: true });
    const profile = profileDumping(path.join(dir, 'never.json'), {
      env: { OPENAI_API_KEY: '${SAGA_TEST_UNSET_VAR}' },
    });
    const failure = await newEnv()
      .run(runAgent, input(profile))
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      nonRetryable: true,
      type: 'MissingEnvVariable',
      message: expect.stringMatching(/env-dump.*OPENAI_API_KEY.*\$\{SAGA_TEST_UNSET_VAR\}.*not set/),
    });
    await expect(fs.stat(path.join(dir, 'never.json'))).rejects.toThrow();
  });
});

/** The environment one check ran with (it dumps it), after asserting the check passed. */
async function checkEnvironment(label: string, extra: { env?: Record<string, string>; passEnv?: string[] }) {
  const out = path.join(dir, `${label}.json`);
  const { runChecks } = createValidationActivities();
  const result = (await newEnv().run(runChecks, {
    sagaDir: path.join(dir, 'saga'),
    cwd: dir,
    checks: [{ text: 'dump', check: `node -e "${dumpEnv(out).replace(/"/g, '\\"')}"` }],
    label,
    timeoutMs: 30_000,
    ...extra,
  })) as RunChecksResult;
  expect(result.passed).toBe(true);
  return readDump(out);
}

test('a check sees PATH and the SAGA_* saga sets, not the worker secrets', async () => {
  const env = await checkEnvironment('env-checks', { env: { SAGA_PORT_BASE: '4200' } });
  expect(env).toMatchObject({ SAGA_PORT_BASE: '4200', PATH: process.env.PATH, HOME: process.env.HOME });
  expectNoWorkerSecrets(env);
  expect(env.MY_TOKEN).toBeUndefined();
});

test('a check gets the variables saga.config.yaml `pass_env` names, never a worker secret even if named', async () => {
  const env = await checkEnvironment('env-checks-pass', { passEnv: ['MY_TOKEN', 'SAGA_WEBHOOK_SECRET'] });
  expect(env.MY_TOKEN).toBe('passed-by-name');
  expectNoWorkerSecrets(env);
  expect(parseSagaConfigText('pass_env: [TEMPORAL_API_KEY]\n', 'saga.config.yaml')).toEqual({
    ok: false,
    errors: ["saga.config.yaml: pass_env[0]: is one of the worker's own secrets and is never passed on"],
  });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@test.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  });

async function gitRepo(files: Record<string, string>): Promise<string> {
  const repo = path.join(dir, 'repo');
  await fs.mkdir(repo, { recursive: true });
  for (const [file, text] of Object.entries(files)) await fs.writeFile(path.join(repo, file), text);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'init');
  return repo;
}

test('a worktree setup command does not get the worker secrets', async () => {
  const repo = await gitRepo({ 'README.md': '# r\n' });
  // Inside the worktree: the setup command runs confined, its worktree the one place it writes.
  const out = path.join(dir, 'wt', 'setup-env.json');
  const activities = createGitActivities({ sagaHome: path.join(dir, 'home') });
  await activities.prepareWorktree({
    repo,
    branch: 'saga/env/m1t1-setup',
    worktree: path.join(dir, 'wt'),
    base: 'main',
    setup: [['node', '-e', dumpEnv(out)]],
    env: { SAGA_PORT_BASE: '4300' },
  });
  const env = await readDump(out);
  expect(env).toMatchObject({ SAGA_PORT_BASE: '4300', PATH: process.env.PATH });
  expectNoWorkerSecrets(env);
});

test('a discovery command does not get the worker secrets', async () => {
  // Inside the repo it runs in: the command is confined, its working directory the one place it writes.
  const out = path.join(dir, 'repo', 'discovery-env.json');
  const repo = await gitRepo({
    'package.json': JSON.stringify({ name: 'envcheck', scripts: { test: 'node dump.js' } }),
    'dump.js': `${dumpEnv(out)};\n`,
  });
  const { discoverEnvironment } = createDiscoveryActivities({ env: process.env });
  const found = await discoverEnvironment({ repo, sagaDir: path.join(dir, 'saga'), timeoutMs: 60_000 });
  expect(found.commands.find((c) => c.purpose === 'test')).toMatchObject({ confirmed: 'passed' });
  const env = await readDump(out);
  expect(env.PATH).toBeTruthy();
  expectNoWorkerSecrets(env);
});

describe('saga.config.yaml env entries', () => {
  const parse = (yaml: string) => parseSagaConfigText(yaml, 'saga.config.yaml');

  test.each([
    [
      'pass_env naming a worker secret',
      'agents:\n  demo:\n    pass_env: [TEMPORAL_API_KEY]\n',
      /agents\.demo\.pass_env\[0\]: is one of the worker's own secrets/,
    ],
    [
      'env setting a worker secret',
      'agents:\n  demo:\n    env: { SLACK_BOT_TOKEN: "${MY_SLACK}" }\n',
      /agents\.demo\.env\.SLACK_BOT_TOKEN: SLACK_BOT_TOKEN is one of the worker's own secrets/,
    ],
    [
      'a reference to a worker secret',
      'agents:\n  demo:\n    env: { X: "${SAGA_WEBHOOK_SECRET}" }\n',
      /agents\.demo\.env\.X: \$\{SAGA_WEBHOOK_SECRET\} names one of the worker's own secrets/,
    ],
    [
      'a malformed reference',
      'agents:\n  demo:\n    env: { X: "${not a name}" }\n',
      /agents\.demo\.env\.X: \$\{not a name\} is not a reference/,
    ],
    [
      'pass_env with a bad name',
      'agents:\n  demo:\n    pass_env: ["A-B"]\n',
      /agents\.demo\.pass_env\[0\]: must be an environment variable name/,
    ],
  ])('refuses %s with a clear error', (_what, yaml, message) => {
    const parsed = parse(yaml);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors.join('\n')).toMatch(message);
  });

  test('references and pass_env are accepted; pass_env reaches the resolved profile', () => {
    const parsed = parse(
      'agents:\n  demo:\n    pass_env: [MY_TOKEN]\n    env: { MY_API_KEY: "${MY_API_KEY}" }\n',
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(resolveAgentProfile(parsed.config, 'demo')).toMatchObject({
      passEnv: ['MY_TOKEN'],
      env: { MY_API_KEY: '${MY_API_KEY}' },
    });
  });

  test('loadRunSettings keeps secret-looking literals out of its result; the agent still gets them', async () => {
    const repo = await gitRepo({
      'saga.config.yaml':
        'agents:\n  demo:\n    env: { OTHER_TOKEN: "literal-token-do-not-store", MY_API_KEY: "${MY_API_KEY}", PLAIN: "kept" }\n',
    });
    const setup = createSagaSetupActivities({ artifacts: {} as never });
    const settings = await setup.loadRunSettings({
      repo,
      sagaHome: path.join(dir, 'home'),
      trustRepoConfig: true,
    });
    expect(JSON.stringify(settings)).not.toContain('literal-token-do-not-store');
    expect(settings.profiles.demo).toMatchObject({
      env: { OTHER_TOKEN: CONFIG_SECRET_REFERENCE, MY_API_KEY: '${MY_API_KEY}', PLAIN: 'kept' },
      configFile: path.join(repo, 'saga.config.yaml'),
    });
    // The run reads the literal back from the config file.
    const out = path.join(dir, 'demo-env.json');
    const profile = { ...settings.profiles.demo!, command: ['{node}', '-e', dumpEnv(out)] };
    const { runAgent } = createAgentActivities({ sagaHome: path.join(dir, 'saga'), profilesFromInput: true });
    const run: RunAgentInput = {
      sagaName: 'env-saga',
      sagaDir: path.join(dir, 'saga'),
      role: 'implementer',
      stage: 'implement',
      taskId: '1.1',
      attempt: 1,
      profile,
      prompt: 'Dump.',
      workdir: dir,
      runLabel: 'm1t1-a1',
    };
    const result = (await newEnv().run(runAgent, run)) as RunAgentResult;
    expect(result.exitCode).toBe(0);
    expect(await readDump(out)).toMatchObject({
      OTHER_TOKEN: 'literal-token-do-not-store',
      MY_API_KEY: 'sk-referenced-value',
      PLAIN: 'kept',
    });
  });
});
