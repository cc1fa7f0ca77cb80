import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createAgentActivities,
  type RunAgentInput,
  type RunAgentResult,
} from '../../../../src/activities/agents';
import { DEFAULT_SAGA_CONFIG } from '../../../../src/domain/config/config';
import {
  resolveAgentProfile,
  type ResolvedAgentProfile,
} from '../../../../src/domain/config/profile-resolution';
import { isRunning, processesWithEnv } from '../../../harness/processes';

/** Expected failures are asserted, not logged. */
const newEnv = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });

const demo = resolveAgentProfile(DEFAULT_SAGA_CONFIG, 'demo');

/** Writes SAGA_* variables and argv as JSON to env-dump.json in the working directory. */
const envDump: ResolvedAgentProfile = {
  ...demo,
  name: 'env-dump',
  command: [
    '{node}',
    '-e',
    "const e = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('SAGA_') || k === 'EXTRA'));" +
      "require('fs').writeFileSync('env-dump.json', JSON.stringify({ env: e, argv: process.argv.slice(1), cwd: process.cwd() }));",
    '{task_id}',
    '{workdir}',
    '{prompt_file}',
    '{prompt}',
  ],
  timeoutMs: 30_000,
  idleTimeoutMs: 30_000,
  subagentDispatch: false,
  env: { EXTRA: 'from-profile' },
};

describe('runAgent', () => {
  let dir: string;
  let sagaDir: string;
  let workdir: string;
  let demoLog: string;
  let runAgent: ReturnType<typeof createAgentActivities>['runAgent'];

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-agents-'));
    sagaDir = path.join(dir, 'saga');
    workdir = path.join(dir, 'worktree');
    demoLog = path.join(dir, 'demo-log.jsonl');
    await fs.mkdir(path.join(workdir, '.saga'), { recursive: true });
    process.env.SAGA_DEMO_LOG = demoLog;
    // The run itself is under test, with profiles made here (a worker checks them against its config files).
    runAgent = createAgentActivities({ sagaHome: sagaDir, profilesFromInput: true }).runAgent;
  });
  afterEach(async () => {
    delete process.env.SAGA_DEMO_LOG;
    await fs.rm(dir, { recursive: true, force: true });
  });

  const runIn = (env: MockActivityEnvironment, args: RunAgentInput) =>
    env.run(runAgent, args) as Promise<RunAgentResult>;

  const writeScript = (script: unknown) =>
    fs.writeFile(path.join(workdir, '.saga', 'demo-script.json'), JSON.stringify(script));

  const input = (overrides: Partial<RunAgentInput> = {}): RunAgentInput => ({
    sagaName: 'demo-saga',
    sagaDir,
    role: 'implementer',
    stage: 'implement',
    taskId: '1.1',
    attempt: 1,
    profile: demo,
    prompt: 'Implement task 1.1.',
    attachments: [],
    context: {},
    workdir,
    runLabel: 'm1t1-a1',
    ...overrides,
  });

  const demoInvocations = async () =>
    (await fs.readFile(demoLog, 'utf8'))
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as { role: string; stage: string; taskId: string; attempt: number; pid: number },
      );

  test('implementer: writes its files, the report is parsed, usage read, run files kept under runs/', async () => {
    await writeScript({
      tasks: {
        '1.1': {
          attempts: [
            { files: { 'src/greet.js': 'first\n' }, exit: 1 },
            {
              files: { 'src/greet.js': 'module.exports = () => "hi";\n' },
              report: { status: 'done', notes: 'second try' },
              usage: { input_tokens: 4000, output_tokens: 500, cost_usd: 0.25 },
            },
          ],
        },
      },
    });
    const env = newEnv();
    const first = await runIn(env, input());
    expect(first.exitCode).toBe(1);
    const result = await runIn(env, input({ attempt: 2, runLabel: 'm1t1-a2' }));
    expect(result).toMatchObject({
      exitCode: 0,
      timedOut: false,
      idle: false,
      cancelled: false,
      report: { status: 'done', notes: 'second try' },
      reportError: null,
      findings: null,
      usage: { inputTokens: 4000, outputTokens: 500, costUsd: 0.25 },
      lastLine: '[demo-agent] done (exit 0)',
    });
    const runDir = path.join(sagaDir, 'runs', 'm1t1-a2');
    expect(result.promptPath).toBe(path.join(runDir, 'prompt.md'));
    expect(result.reportPath).toBe(path.join(runDir, 'report.json'));
    expect(result.transcriptPath).toBe(path.join(runDir, 'transcript.log'));
    expect(await fs.readFile(path.join(workdir, 'src/greet.js'), 'utf8')).toBe(
      'module.exports = () => "hi";\n',
    );
    expect(await fs.readFile(result.transcriptPath, 'utf8')).toContain('wrote src/greet.js');
    expect((await demoInvocations()).map((i) => [i.role, i.stage, i.taskId, i.attempt])).toEqual([
      ['implementer', 'implement', '1.1', 1],
      ['implementer', 'implement', '1.1', 2],
    ]);
  });

  test('every SAGA_* variable, profile env and extraEnv reach the process; placeholders fill argv', async () => {
    const env = newEnv();
    const result = await runIn(
      env,
      input({
        profile: envDump,
        role: 'reviewer',
        stage: 'task',
        attempt: 3,
        extraEnv: { SAGA_PORT_BASE: '4100' },
      }),
    );
    expect(result.exitCode).toBe(0);
    const dump = JSON.parse(await fs.readFile(path.join(workdir, 'env-dump.json'), 'utf8'));
    expect(dump.env).toEqual({
      // The worker's SAGA_DEMO_LOG is the demo preset's own variable: not passed to this 'env-dump' profile.
      EXTRA: 'from-profile',
      SAGA_PORT_BASE: '4100',
      SAGA_NAME: 'demo-saga',
      SAGA_TASK_ID: '1.1',
      SAGA_ROLE: 'reviewer',
      SAGA_STAGE: 'task',
      SAGA_ATTEMPT: '3',
      SAGA_PROMPT_FILE: result.promptPath,
      SAGA_REPORT_FILE: result.reportPath,
      SAGA_WORKTREE: workdir,
    });
    expect(dump.cwd).toBe(workdir);
    const promptText = await fs.readFile(result.promptPath, 'utf8');
    expect(dump.argv).toEqual(['1.1', workdir, result.promptPath, promptText]);
  });

  test('the prompt file carries the attachments and the context as the last json block', async () => {
    const small = path.join(dir, 'check-1.log');
    const big = path.join(dir, 'huge.log');
    await fs.writeFile(small, 'AssertionError: expected "hi"\n');
    await fs.writeFile(big, 'HEAD-MARK\n' + 'x'.repeat(200_000) + '\nTAIL-MARK\n');
    const context = { round: 2, note: 'contains ``` backticks', answers: [{ id: 'q1', choice: 'A' }] };
    const env = newEnv();
    const result = await runIn(
      env,
      input({ attachments: [small, big, path.join(dir, 'missing.log')], context, taskId: '9.9' }),
    );
    const prompt = await fs.readFile(result.promptPath, 'utf8');
    expect(prompt.startsWith('Implement task 1.1.\n')).toBe(true);
    expect(prompt).toContain('AssertionError: expected "hi"');
    expect(prompt).toContain('HEAD-MARK');
    expect(prompt).toContain('TAIL-MARK');
    expect(prompt).toMatch(/\[\.\.\. \d+ bytes left out; full file: .*huge\.log \.\.\.\]/);
    expect(prompt).toContain('could not read');
    expect(prompt.length).toBeLessThan(80_000);
    const blocks = [...prompt.matchAll(/```json\n([\s\S]*?)\n```/g)];
    expect(JSON.parse(blocks[blocks.length - 1][1])).toEqual(context);
    // The unknown task is a note and a clean exit with no changes.
    expect(result.exitCode).toBe(0);
    expect(await fs.readFile(result.transcriptPath, 'utf8')).toContain('task 9.9 is not in the demo script');
  });

  test('heartbeats carry progress while the agent works', async () => {
    await writeScript({ tasks: { '1.1': { attempts: [{ sleep_ms: 2300 }] } } });
    const env = newEnv();
    const beats: Array<{ outputBytes: number; lastLine: string; elapsedMs: number }> = [];
    env.on('heartbeat', (details) => beats.push(details));
    const result = await runIn(env, input());
    expect(result.exitCode).toBe(0);
    expect(beats.length).toBeGreaterThanOrEqual(3); // one at start, then about one a second
    const last = beats[beats.length - 1];
    expect(last.elapsedMs).toBeGreaterThanOrEqual(1000);
    expect(last.outputBytes).toBeGreaterThan(0);
    expect(last.lastLine).toMatch(/^\[demo-agent\] working\.\.\. \d+ ms$/);
  });

  test('cancellation kills the agent and is rethrown', async () => {
    await writeScript({ tasks: { '1.1': { attempts: [{ hang: true }] } } });
    const env = newEnv();
    const run = runIn(env, input());
    let pid: number | undefined;
    for (let i = 0; i < 100 && pid === undefined; i++) {
      await new Promise((r) => setTimeout(r, 50));
      pid = await demoInvocations()
        .then((list) => list[0]?.pid)
        .catch(() => undefined);
    }
    expect(pid).toBeDefined();
    // Confined, the agent's own pid is its PID namespace's; the host finds it by its environment.
    const running = processesWithEnv(`SAGA_DEMO_LOG=${demoLog}`);
    expect(running.length).toBeGreaterThan(0);
    env.cancel();
    await expect(run).rejects.toBeInstanceOf(CancelledFailure);
    expect(running.filter(isRunning)).toEqual([]);
  });

  test('an agent silent past its idle timeout is killed and reported idle', async () => {
    await writeScript({ tasks: { '1.1': { attempts: [{ hang: true }] } } });
    const env = newEnv();
    const result = await runIn(env, input({ profile: { ...demo, idleTimeoutMs: 600 } }));
    expect(result).toMatchObject({ idle: true, exitCode: null, report: null });
    expect(await demoInvocations()).toHaveLength(1);
    expect(processesWithEnv(`SAGA_DEMO_LOG=${demoLog}`)).toEqual([]);
  });

  test('planner questions follow context.round; plan comes from the script', async () => {
    const q = {
      id: 'q1',
      text: 'Which?',
      options: ['A', 'B'],
      recommended: 0,
      substantive: true,
      why: 'scope',
    };
    const plan = { name: 'add-greeting', milestones: [] };
    await writeScript({ planner: { questions: [[q]], plan } });
    const env = newEnv();
    const planner = (stage: string, round: number) =>
      runIn(
        env,
        input({ role: 'planner', stage, taskId: '', context: { round }, runLabel: `plan-${stage}-${round}` }),
      );
    expect((await planner('questions', 1)).report).toEqual({
      problem: 'Demo problem statement.',
      questions: [q],
      decisions: [],
    });
    expect((await planner('questions', 2)).report).toMatchObject({ questions: [] });
    expect((await planner('plan', 1)).report).toEqual(plan);
  });

  test('reviewer findings text comes back; past the script the review is clean', async () => {
    await writeScript({ reviewer: { task: ['CRITICAL:\n- null deref in greet()\nMAJOR: None\n'] } });
    const env = newEnv();
    const review = (iteration: number) =>
      runIn(
        env,
        input({ role: 'reviewer', stage: 'task', context: { iteration }, runLabel: `rev-${iteration}` }),
      );
    const first = await review(1);
    expect(first.findings).toBe('CRITICAL:\n- null deref in greet()\nMAJOR: None\n');
    expect(first.report).toBeNull(); // findings are text, not a JSON object, and that is fine
    expect(first.reportError).toBeNull();
    expect((await review(2)).findings).toMatch(/^CRITICAL: None\nMAJOR: None\n/);
  });

  test('resolver (union) removes conflict markers and keeps both sides', async () => {
    await fs.writeFile(
      path.join(workdir, 'greet.js'),
      'a\n<<<<<<< HEAD\nours\n||||||| base\nold\n=======\ntheirs\n>>>>>>> saga/x/m1t2-b\nz\n',
    );
    const env = newEnv();
    const result = await runIn(
      env,
      input({
        role: 'resolver',
        stage: 'merge',
        context: { conflictedFiles: ['greet.js'] },
        runLabel: 'merge-1',
      }),
    );
    expect(result.exitCode).toBe(0);
    expect(await fs.readFile(path.join(workdir, 'greet.js'), 'utf8')).toBe('a\nours\ntheirs\nz\n');
  });

  test('run files stay inside the saga directory whatever the label', async () => {
    const env = newEnv();
    const result = await runIn(env, input({ runLabel: '../../../etc/evil label' }));
    expect(path.dirname(result.promptPath)).toBe(path.join(sagaDir, 'runs', 'etc-evil-label'));
  });

  test("a missing agent CLI is the implementer's answer: not retryable, naming the command and saga doctor", async () => {
    const env = newEnv();
    const profile = { ...demo, name: 'ghost', command: ['saga-ghost-agent-cli', '{prompt}'] };
    const result = await runIn(env, input({ profile }));
    expect(result.exitCode).toBeNull();
    expect(result.failure).toEqual({
      kind: 'not-installed',
      retryable: false,
      message:
        "agent ghost could not start: 'saga-ghost-agent-cli' command not found (ENOENT); is it installed and on PATH? — install it or fix the profile's command; run 'saga doctor --agent ghost'",
    });
    expect(await fs.readFile(result.transcriptPath, 'utf8')).toContain('could not start');
  });

  test('a planner, reviewer or resolver that cannot start fails its activity without retries', async () => {
    const env = newEnv();
    const profile = { ...demo, name: 'ghost', command: ['saga-ghost-agent-cli', '{prompt}'] };
    const failure = await runIn(env, input({ profile, role: 'reviewer', stage: 'task' })).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).nonRetryable).toBe(true);
    expect((failure as ApplicationFailure).message).toMatch(
      /^agent ghost could not start: 'saga-ghost-agent-cli'/,
    );
  });

  test('bad input is refused with the field named', async () => {
    const env = newEnv();
    await expect(runIn(env, input({ sagaDir: 'relative/dir' }))).rejects.toThrow(
      /Invalid runAgent input: sagaDir: must be an absolute path/,
    );
  });
});
