/**
 * `saga doctor` and the agent check of `saga start`, through bin/saga as a user runs them: the real Claude
 * Code CLI (or its absence), the run's real Temporal server, a real repo; the probe runs the CLI against
 * its stand-in and looks at what it did.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { runSaga } from '../../harness/cli';
import { createFleetRepo, planTask } from '../../harness/fleet-saga';
import { AGENT_CLI_BIN } from '../../harness/server';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';
import { claudeEndpoint, startAnthropicStandIn } from '../../standins/anthropic';
import type { StandIn } from '../../standins/script';

let env: SagaTestEnv;
let standIn: StandIn;
let endpointEnv: Record<string, string>;
const withClis = () => `${AGENT_CLI_BIN}${path.delimiter}${process.env.PATH ?? ''}`;

beforeAll(async () => {
  env = await createSagaTestEnv('doctor');
  standIn = await startAnthropicStandIn({
    steps: [
      { kind: 'write', path: 'saga-probe.txt', content: 'ok\n' },
      { kind: 'shell', command: `node -e "require('fs').writeFileSync('saga-probe-ran.txt', 'ran')"` },
    ],
    finalText: 'Done.',
  });
  const home = env.tmp('agent-home');
  endpointEnv = await claudeEndpoint(standIn, home);
});

afterAll(async () => {
  await standIn?.close();
  await env?.close();
});

/** A repo whose saga.config.yaml sets these fields of the claude profile. */
function repoWith(label: string, claude: Record<string, unknown>): string {
  const dir = env.tmp(label);
  return createFleetRepo(dir, {
    plan: { name: label },
    script: {},
    config: YAML.stringify({ agents: { claude } }),
  }).repo;
}

const doctor = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
  runSaga(['doctor', ...args], { ...env.cliEnv, ...extraEnv }, 180_000);

test('a CLI that is not on PATH: FAIL with how to install it, exit 2', async () => {
  const repo = repoWith('missing', { env: endpointEnv });
  const result = await doctor(['--repo', repo, '--agent', 'claude'], { PATH: '/usr/bin:/bin' });
  expect(result.code).toBe(2);
  expect(result.stdout).toMatch(/^OK {4}git: git version /m);
  expect(result.stdout).toMatch(/^OK {4}temporal: /m);
  expect(result.stdout).toMatch(/^OK {4}saga home: /m);
  expect(result.stdout).toMatch(/^OK {4}repo: /m);
  expect(result.stdout).toContain(
    "FAIL  agent claude: 'claude' is not installed or not on PATH. Install it: npm install -g @anthropic-ai/claude-code",
  );
});

test('without --agent: the agents the config uses are checked, the other presets listed as optional', async () => {
  // The fleet repo's config sets `default_agent: demo` and declares no profile; no other CLI is on PATH.
  const repo = createFleetRepo(env.tmp('optional'), { plan: { name: 'optional' }, script: {} }).repo;
  const result = await doctor(['--repo', repo], { PATH: '/usr/bin:/bin' });
  expect(result.stdout).toMatch(/^OK {4}agent demo: /m);
  expect(result.stdout).toMatch(/^OK {4}agent demo version: /m);
  expect(result.stdout).toMatch(/^OK {4}agent claude: 'claude' not installed \(optional\)$/m);
  expect(result.stdout).toMatch(/^OK {4}agent aider: 'aider' not installed \(optional\)$/m);
  expect(result.stdout).not.toMatch(/^FAIL/m);
  expect(result.code).toBe(0);
});

test('installed but no key and no login: FAIL naming the variables', async () => {
  // A reference to a variable the worker does not have is no key either.
  const repo = repoWith('nokey', {
    env: { HOME: env.tmp('empty-home'), ANTHROPIC_API_KEY: '${SAGA_DOCTOR_UNSET_KEY}' },
  });
  const result = await doctor(['--repo', repo, '--agent', 'claude'], {
    PATH: withClis(),
    ANTHROPIC_API_KEY: '',
    ANTHROPIC_AUTH_TOKEN: '',
    CLAUDE_CODE_OAUTH_TOKEN: '',
  });
  expect(result.code).toBe(2);
  expect(result.stdout).toMatch(/^OK {4}agent claude: claude found at .*tools\/agent-bin\/claude$/m);
  expect(result.stdout).toMatch(
    /^FAIL {2}agent claude credentials: none of ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_USE_VERTEX is set/m,
  );
});

test('--probe: the real CLI edits a file and runs a command in a scratch repo; its verified version', async () => {
  const repo = repoWith('probe', { env: endpointEnv });
  const result = await doctor(['--repo', repo, '--agent', 'claude', '--probe'], { PATH: withClis() });
  expect(result.stderr).toContain('Probing agent claude');
  expect(result.stdout).toMatch(/^OK {4}agent claude credentials: ANTHROPIC_API_KEY is set/m);
  expect(result.stdout).toMatch(/^OK {4}agent claude version: 2\.1\.328 \(verified\)/m);
  expect(result.stdout).toMatch(
    /^OK {4}agent claude probe: edit a file: saga-probe.txt written; \d+ in \/ \d+ out tokens/m,
  );
  expect(result.stdout).toMatch(/^OK {4}agent claude probe: run a command: /m);
  expect(result.code).toBe(0);
});

test('--probe with a command that has no permission to act: both FAIL, with the denial named', async () => {
  // dontAsk: deny every call not pre-approved. Without a mode the CLI's default is what its own environment
  // checks make of the machine (a CI machine let both calls run), so the test names the mode.
  const repo = repoWith('denied', {
    command: ['claude', '-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'dontAsk'],
    prompt_input: 'stdin',
    output: 'claude',
    env: endpointEnv,
  });
  const result = await doctor(['--repo', repo, '--agent', 'claude', '--probe', '--json'], {
    PATH: withClis(),
  });
  expect({ code: result.code, stdout: result.stdout }).toMatchObject({ code: 2 });
  const report = JSON.parse(result.stdout) as {
    ok: boolean;
    checks: { name: string; level: string; detail: string }[];
  };
  expect(report.ok).toBe(false);
  const probe = report.checks.filter((c) => c.name.startsWith('agent claude probe'));
  expect(probe.map((c) => c.level)).toEqual(['fail', 'fail', 'fail']);
  expect(probe[2]!.detail).toMatch(
    /^agent claude was denied 2 tool calls: Write\(.*saga-probe\.txt\), Bash\(node -e/,
  );
});

test('bad arguments are user errors (exit 1) that name the problem', async () => {
  expect(await doctor(['--probe'])).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('--probe needs --agent NAME'),
  });
  expect(await doctor(['--agent', 'nope'])).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('--agent nope: unknown agent profile'),
  });
});

test('saga start refuses an agent that cannot run, before anything starts', async () => {
  const dir = env.tmp('start');
  const { repo, planFile } = createFleetRepo(dir, {
    plan: {
      name: 'refused',
      problem: 'One file.',
      scope: { in: [], out: [], delegated: [] },
      exit_criteria: [{ id: 'E1', text: 'ok', check: 'true' }],
      milestones: [
        {
          id: 1,
          slug: 'one',
          title: 'One',
          depends_on: [],
          goal: 'One file.',
          validation: [{ text: 'ok', check: 'true' }],
          tasks: [planTask(1, 'one', ['one.txt'], 'test -f one.txt')],
        },
      ],
    },
    script: {},
  });
  const result = await runSaga(
    ['start', '--repo', repo, '--plan', planFile, '--agent', 'claude', '--', 'One file'],
    { ...env.cliEnv, PATH: '/usr/bin:/bin' },
  );
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("Cannot start: agent claude: 'claude' is not installed or not on PATH");
  expect(result.stderr).toContain('saga doctor --agent claude');
  expect(existsSync(path.join(env.sagaHome, 'refused'))).toBe(false);
  const list = await runSaga(['list', '--json'], env.cliEnv);
  expect((JSON.parse(list.stdout) as { name: string }[]).map((s) => s.name)).not.toContain('refused');
});
