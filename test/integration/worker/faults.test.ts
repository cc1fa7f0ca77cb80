/**
 * Fault injection against the real server, real git and real processes: an agent killed by a signal, an
 * agent that writes 50 MB, a check that never ends, an artifact write that fails (a directory in the way),
 * a stale git lock left by a crashed process, a dirty repo at start, and a worker killed during a merge.
 * Each ends in a clear state, and no commit is lost.
 */
import type { ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { prepareSaga } from '../../../src/client/commands/start';
import { UserError } from '../../../src/client/errors';
import { respond } from '../../../src/client/saga-client';
import { sagaWorkflowId, taskWorkflowId } from '../../../src/domain/contract/naming';
import { PlanSchema } from '../../../src/domain/plan';
import { taskWorkflow, type TaskReport } from '../../../src/workflows/task/task';
import {
  createFleetRepo,
  git,
  planTask,
  sagaWorktrees,
  startApprovedSaga,
  userConfigBeside,
} from '../../harness/fleet-saga';
import { processesRunning } from '../../harness/processes';
import { standaloneTaskInput } from '../../harness/task-input';
import { createSagaTestEnv, sagaStatus, waitForPending, type SagaTestEnv } from '../../harness/saga-env';
import { startWorkerProcess } from '../../harness/ts-worker';
import { waitFor } from '../../harness/wait';

const onePlan = (name: string, tasks: Record<string, unknown>[], milestoneCheck = 'test -f README.md') => ({
  name,
  problem: `Fault scenario ${name}.`,
  scope: { in: ['everything'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'the readme is there', check: 'test -f README.md' }],
  milestones: [
    {
      id: 1,
      slug: 'm1',
      title: 'Milestone 1',
      depends_on: [],
      goal: 'Fault scenario.',
      validation: [{ text: 'milestone check', check: milestoneCheck }],
      tasks,
    },
  ],
});

/** Replaces the repo's saga.config.yaml (createFleetRepo writes a default one) and commits it. */
function setConfig(repo: string, config: string): void {
  writeFileSync(path.join(repo, 'saga.config.yaml'), config);
  // Also the user's own file, which startApprovedSaga passes as --config (the repo's alone is not trusted).
  writeFileSync(userConfigBeside(repo), config);
  git(repo, 'commit', '-q', '-am', 'fault test config');
}

/** A process that is gone, or a zombie nobody reaped. */
function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return ['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!);
  } catch {
    return true;
  }
}

describe('fault injection', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('faults');
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  /** Runs one task workflow directly (its saga does not exist: progress reports are dropped). */
  async function runTask(
    label: string,
    task: Record<string, unknown>,
    config: string,
    script: Record<string, unknown> = {},
  ) {
    const name = `flt-${label}`;
    const { repo } = createFleetRepo(env.tmp(label), { plan: onePlan(name, [task]), script });
    setConfig(repo, config);
    const mainBefore = git(repo, 'rev-parse', 'main');
    const spec = PlanSchema.parse(onePlan(name, [task])).milestones[0]!.tasks[0]!;
    const input = await standaloneTaskInput(env, {
      name,
      repo,
      spec,
      goal: 'Fault scenario',
      portBase: 20_700,
    });
    const handle = await env.client.workflow.start(taskWorkflow, {
      taskQueue: env.taskQueue,
      workflowId: taskWorkflowId(name, 1, 1),
      args: [input],
    });
    const report: TaskReport = await handle.result();
    // Whatever happened, the work is committed on the task branch, the worktree is gone, main untouched.
    expect(git(repo, 'rev-parse', input.branch)).toBe(report.commit);
    expect(existsSync(input.worktree)).toBe(false);
    expect(git(repo, 'rev-parse', 'main')).toBe(mainBefore);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    return { report, repo, input, history: await handle.fetchHistory() };
  }

  test('an agent killed by a signal: blocked with its transcript, the partial work committed', async () => {
    const command = ['sh', '-c', 'echo partial > partial.txt; echo about to die; kill -KILL $$'];
    const { report, repo, input } = await runTask(
      'signal',
      planTask(1, 'doomed', ['partial.txt'], 'test -f done.txt'),
      `attempts: 2\ndefault_agent: doomed\nagents:\n  doomed: { command: ${JSON.stringify(command)} }\n`,
    );
    expect(report).toMatchObject({ status: 'blocked', reason: 'agent exited with SIGKILL', attempts: 2 });
    expect(readFileSync(report.evidence[0]!, 'utf8')).toContain('about to die');
    expect(git(repo, 'show', `${input.branch}:partial.txt`)).toBe('partial');
  }, 60_000);

  test('an agent that writes 50 MB: the transcript holds it on disk, history stays small', async () => {
    const writer =
      "const line = 'x'.repeat(1023) + '\\n'; const mb = line.repeat(1024);" +
      "for (let i = 0; i < 50; i++) process.stdout.write(mb); require('fs').writeFileSync('big.txt', 'done\\n');";
    const command = ['{node}', '-e', writer];
    const { report, repo, input, history } = await runTask(
      'chatty',
      planTask(1, 'chatty', ['big.txt'], 'test -f big.txt'),
      `attempts: 1\ndefault_agent: chatty\nagents:\n  chatty: { command: ${JSON.stringify(command)} }\n`,
    );
    expect(report).toMatchObject({ status: 'passed', attempts: 1 });
    const transcript = path.join(input.ctx.sagaDir, 'runs', 'm1t1-d1-a1', 'transcript.log');
    expect(statSync(transcript).size).toBeGreaterThan(50 * 2 ** 20);
    expect(historyToJSON(history).length).toBeLessThan(200_000);
    expect(git(repo, 'show', `${input.branch}:big.txt`)).toBe('done');
  }, 60_000);

  test('a check that never ends is killed at the check timeout: blocked, with the evidence', async () => {
    const marker = `sleep 987.${process.pid}`;
    const { report, repo, input } = await runTask(
      'endless',
      planTask(1, 'endless', ['e.txt'], marker),
      'default_agent: demo\nattempts: 1\ncheck_timeout: 2s\n',
      { tasks: { '1.1': { attempts: [{ files: { 'e.txt': 'work\n' } }] } } },
    );
    expect(report.status).toBe('blocked');
    expect(report.reason).toMatch(/timed out/);
    expect(readFileSync(report.evidence[0]!, 'utf8')).toMatch(/check killed after 2000 ms \(timeout\)/);
    expect(processesRunning(marker)).toEqual([]);
    expect(git(repo, 'show', `${input.branch}:e.txt`)).toBe('work');
  }, 60_000);

  test('a repo with uncommitted changes is refused at start, naming the files', async () => {
    const { repo, planFile } = createFleetRepo(env.tmp('dirty'), {
      plan: onePlan('dirty', [planTask(1, 'x', ['x.txt'], 'true')]),
      script: {},
    });
    writeFileSync(path.join(repo, 'README.md'), '# changed\n');
    writeFileSync(path.join(repo, 'notes.txt'), 'untracked\n');
    process.env.SAGA_HOME = env.sagaHome;
    const attempt = prepareSaga({ repo, argumentsText: 'Dirty', plan: planFile, name: 'dirty' });
    await expect(attempt).rejects.toThrow(UserError);
    await expect(attempt).rejects.toThrow(/uncommitted changes \(README\.md, notes\.txt\).*Commit or stash/);
    await expect(env.client.workflow.getHandle(sagaWorkflowId('dirty')).describe()).rejects.toThrow();
  });

  test('an artifact write that fails is retried, leaves nothing half-written, and succeeds once fixed', async () => {
    const name = 'flt-report';
    const { repo, planFile } = createFleetRepo(env.tmp('report'), {
      plan: onePlan(name, [planTask(1, 'r', ['r.txt'], 'test -f r.txt')]),
      script: { tasks: { '1.1': { attempts: [{ files: { 'r.txt': 'r\n' } }] } } },
    });
    const input = await startApprovedSaga(env, { repo, planFile, name, args: 'Report fault' });
    // A directory where REPORT.md goes: the atomic rename onto it fails, as a full disk would fail a write.
    const obstacle = path.join(input.sagaDir, 'REPORT.md');
    mkdirSync(obstacle);
    writeFileSync(path.join(obstacle, 'keep'), 'in the way\n');
    const handle = env.client.workflow.getHandle(sagaWorkflowId(name));
    const failing = await waitFor('writeSagaReport to fail and be retried', async () => {
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      return pending.find((a) => a.activityType?.name === 'writeSagaReport' && (a.attempt ?? 0) >= 2);
    });
    expect(failing.lastFailure?.message).toMatch(/REPORT\.md|EISDIR|ENOTEMPTY|directory/i);
    // Nothing half-written: no temp file of the failing write left, the obstacle untouched. (Other
    // artifacts, e.g. PROGRESS.md, may be mid-way through their own atomic write at this moment.)
    expect(readdirSync(input.sagaDir).filter((f) => f.startsWith('.REPORT.md.'))).toEqual([]);
    expect(readdirSync(obstacle)).toEqual(['keep']);

    rmSync(obstacle, { recursive: true });
    const status = await waitForPending(env, name, 'acceptance-1', 60_000);
    expect(readFileSync(obstacle, 'utf8')).toMatch(/E1/);
    expect(readdirSync(input.sagaDir).filter((f) => f.startsWith('.REPORT.md.'))).toEqual([]);
    const commit = status.milestones[0]!.tasks[0]!.commit!;
    expect(() => git(repo, 'merge-base', '--is-ancestor', commit, `saga/${name}/integration`)).not.toThrow();
    await respond(env.client, name, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
    await handle.result();
  }, 120_000);

  test('a stale index.lock left by a crashed git is recovered at the fast-forward of main', async () => {
    const name = 'flt-lock';
    const { repo, planFile } = createFleetRepo(env.tmp('lock'), {
      plan: onePlan(name, [planTask(1, 'l', ['l.txt'], 'test -f l.txt')]),
      script: { tasks: { '1.1': { attempts: [{ files: { 'l.txt': 'l\n' } }] } } },
    });
    await startApprovedSaga(env, { repo, planFile, name, args: 'Lock fault' });
    const status = await waitForPending(env, name, 'acceptance-1', 60_000);
    const lock = path.join(repo, '.git', 'index.lock');
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    await respond(env.client, name, {
      interactionId: 'acceptance-1',
      choice: 'accept and fast-forward',
      user: 'test',
    });
    await env.client.workflow.getHandle(sagaWorkflowId(name)).result();
    const done = await sagaStatus(env, name);
    expect(done.phase).toBe('complete');
    expect(done.log.join('\n')).toMatch(/Fast-forwarded main to the integration branch/);
    expect(existsSync(lock)).toBe(false);
    expect(git(repo, 'rev-parse', 'main')).toBe(git(repo, 'rev-parse', `saga/${name}/integration`));
    expect(readFileSync(path.join(repo, 'l.txt'), 'utf8')).toBe('l\n');
    const commit = status.milestones[0]!.tasks[0]!.commit!;
    expect(() => git(repo, 'merge-base', '--is-ancestor', commit, 'main')).not.toThrow();
  }, 120_000);
});

/**
 * Implementers write their own file and a shared one (so the second merge conflicts); the resolver's first
 * run records its pid and sleeps (the worker is killed under it), a later run resolves by keeping both lines.
 */
const MERGE_AGENT = `
const fs = require('node:fs');
const role = process.env.SAGA_ROLE;
const task = process.env.SAGA_TASK_ID;
if (role === 'implementer') {
  fs.writeFileSync('own-' + task + '.txt', task + '\\n');
  fs.writeFileSync('shared.txt', 'from ' + task + '\\n');
} else if (role === 'resolver') {
  fs.appendFileSync(process.env.RESOLVER_LOG, process.pid + '\\n');
  const runs = fs.readFileSync(process.env.RESOLVER_LOG, 'utf8').trim().split('\\n').length;
  setTimeout(() => fs.writeFileSync('shared.txt', 'from 1.1\\nfrom 1.2\\n'), runs === 1 ? 120000 : 0);
}
`;

describe('a worker restart during a merge', () => {
  let env: SagaTestEnv;
  const workers: ChildProcess[] = [];
  beforeAll(async () => {
    env = await createSagaTestEnv('faultmerge'); // no in-process workers: only the child process works
  });
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
    await env.close();
  });

  async function startWorker(dir: string): Promise<ChildProcess> {
    const child = await startWorkerProcess(dir, env.cliEnv);
    workers.push(child);
    return child;
  }

  test('the worker is killed while the resolver works; a new worker ends the milestone integrated', async () => {
    const dir = env.tmp('merge');
    const agent = path.join(dir, 'merge-agent.js');
    const resolverLog = path.join(dir, 'resolver.log');
    writeFileSync(agent, MERGE_AGENT);
    const name = 'flt-merge';
    const config = [
      'default_agent: merger',
      'attempts: 1',
      'heartbeat_timeout: 2s',
      // The resolver logs its host pid for the test to see it run on: unconfined (a confined pid is its
      // namespace's; the sandbox's own crash behaviour is in test/unit/activities/sandbox/sandbox.test.ts).
      'sandbox: none',
      'agents:',
      `  merger: { command: ["{node}", ${JSON.stringify(agent)}], subagent_dispatch: true, env: { RESOLVER_LOG: ${JSON.stringify(resolverLog)} } }`,
      '',
    ].join('\n');
    // Both tasks write shared.txt: integrating the second conflicts and goes to the resolver.
    const { repo, planFile } = createFleetRepo(dir, {
      plan: onePlan(
        name,
        [
          planTask(1, 'one', ['own-1.1.txt'], 'test -f own-1.1.txt'),
          planTask(2, 'two', ['own-1.2.txt'], 'test -f own-1.2.txt'),
        ],
        'grep -qx "from 1.1" shared.txt && grep -qx "from 1.2" shared.txt',
      ),
      script: {},
    });
    setConfig(repo, config);

    const first = await startWorker(env.tmp('worker1'));
    await startApprovedSaga(env, { repo, planFile, name, args: '--subagents --parallel=2 Merge fault' });
    const resolverPid = await waitFor(
      'the resolver to start',
      () => existsSync(resolverLog) && Number(readFileSync(resolverLog, 'utf8').split('\n')[0]),
      90_000,
    );
    const integration = path.join(path.dirname(repo), `saga-${name}-integration`);
    expect(readFileSync(path.join(integration, 'shared.txt'), 'utf8')).toMatch(/^<<<<<<< /m); // mid-merge
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    await startWorker(env.tmp('worker2'));
    const status = await waitForPending(env, name, 'acceptance-1', 120_000);
    const tasks = status.milestones[0]!.tasks;
    expect(tasks.map((t) => t.status)).toEqual(['integrated', 'integrated']);
    expect(status.milestones[0]!.status).toBe('integrated');
    expect(status.log.join('\n')).toMatch(/Resolver fixed the conflict of 1\.2/);
    // No lost commits: both task commits are in the integration branch, which holds both lines.
    const branch = `saga/${name}/integration`;
    for (const t of tasks)
      expect(() => git(repo, 'merge-base', '--is-ancestor', t.commit!, branch)).not.toThrow();
    expect(git(repo, 'show', `${branch}:shared.txt`)).toBe('from 1.1\nfrom 1.2');
    // The interrupted resolver was ended by the retry; no saga worktree is left.
    expect(readFileSync(resolverLog, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(processGone(resolverPid)).toBe(true);
    expect(sagaWorktrees(repo, name)).toEqual([]);
    await respond(env.client, name, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
    await env.client.workflow.getHandle(sagaWorkflowId(name)).result();
  }, 200_000);
});
