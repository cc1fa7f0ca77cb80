/**
 * A worker SIGKILLed while the real Claude Code CLI works on a task: the retried attempt, on a
 * new worker for the same host, resumes the interrupted session in the same worktree — its argv names the
 * session the killed try had started, and the stand-in receives that run's earlier turns — and the task
 * passes without its agent starting over.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { taskWorkflowId } from '../../../../src/domain/contract/naming';
import { PlanSchema } from '../../../../src/domain/plan';
import { taskWorkflow } from '../../../../src/workflows/task/task';
import { createFleetRepo, git, planTask } from '../../../harness/fleet-saga';
import { AGENT_CLI_BIN } from '../../../harness/server';
import { createSagaTestEnv, type SagaTestEnv } from '../../../harness/saga-env';
import { standaloneTaskInput } from '../../../harness/task-input';
import { startWorkerProcess } from '../../../harness/ts-worker';
import { claudeEndpoint, startAnthropicStandIn } from '../../../standins/anthropic';
import type { StandIn } from '../../../standins/script';
import { waitFor } from '../../../harness/wait';

const SCOPE = 'Write alpha.txt containing "hello", then wait (crash test).';

jest.setTimeout(300_000);

describe('a worker killed mid-agent', () => {
  let env: SagaTestEnv;
  let standIn: StandIn | undefined;
  const workers: ChildProcess[] = [];
  beforeAll(async () => {
    env = await createSagaTestEnv('session-crash');
  });
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
    await standIn?.close();
    await env.close();
  });

  test('the retried attempt resumes the interrupted Claude session in the same worktree', async () => {
    standIn = await startAnthropicStandIn({
      steps: [
        { kind: 'write', path: 'alpha.txt', content: 'hello\n' },
        // Long enough to kill the worker under it.
        { kind: 'shell', command: 'sleep 20' },
      ],
      finalText: 'Wrote alpha.txt and waited.',
    });
    const dir = env.tmp('crash');
    const home = path.join(dir, 'agent-home');
    mkdirSync(home, { recursive: true });
    const check = 'test "$(cat alpha.txt)" = hello';
    const config = {
      default_agent: 'claude',
      heartbeat_timeout: '3s',
      attempts: 1,
      agents: { claude: { timeout: '2m', idle_timeout: '90s', env: await claudeEndpoint(standIn, home) } },
    };
    const name = 'sc-crash';
    const spec = PlanSchema.parse({
      name,
      problem: 'p',
      scope: { in: ['alpha.txt'], out: [], delegated: [] },
      exit_criteria: [{ id: 'E1', text: 'alpha', check }],
      milestones: [
        {
          id: 1,
          slug: 'files',
          title: 'Files',
          depends_on: [],
          goal: 'alpha.txt.',
          validation: [{ text: 'alpha', check }],
          tasks: [{ ...planTask(1, 'alpha', ['alpha.txt'], check), scope: SCOPE }],
        },
      ],
    }).milestones[0]!.tasks[0]!;
    const { repo } = createFleetRepo(dir, { plan: {}, script: {} });
    writeFileSync(path.join(repo, 'saga.config.yaml'), YAML.stringify(config));
    git(repo, 'commit', '-q', '-am', 'claude config');
    const input = await standaloneTaskInput(env, {
      name,
      repo,
      spec,
      goal: 'Write a file',
      portBase: 20_710,
    });
    const workerEnv = { ...env.cliEnv, PATH: `${AGENT_CLI_BIN}${path.delimiter}${process.env.PATH ?? ''}` };
    const first = await startWorkerProcess(env.tmp('worker1'), workerEnv);
    workers.push(first);
    const handle = await env.client.workflow.start(taskWorkflow, {
      taskQueue: env.taskQueue,
      workflowId: taskWorkflowId(name, 1, 1),
      args: [input],
    });

    // The agent has written alpha.txt and sits in its `sleep` (the stand-in has sent the Bash call).
    const runDir = path.join(input.ctx.sagaDir, 'runs', 'm1t1-d1-a1');
    const agentFile = path.join(runDir, 'agent.json');
    const sessionId = await waitFor('the session id in the run folder', () => {
      if (!existsSync(agentFile)) return null;
      return (JSON.parse(readFileSync(agentFile, 'utf8')) as { sessionId?: string }).sessionId ?? null;
    });
    // The request that returns the write's result is answered with the `sleep` call.
    await waitFor('the shell step to be sent', () =>
      standIn!.requests.some((r) => JSON.stringify(r.body).includes('toolu_standin_01')),
    );
    await new Promise((r) => setTimeout(r, 2500)); // a heartbeat or two with the session id
    const beforeKill = standIn.requests.length;
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    const second = await startWorkerProcess(env.tmp('worker2'), workerEnv);
    workers.push(second);
    const report = await handle.result();
    expect(report).toMatchObject({ status: 'passed', attempts: 1, reason: null });
    expect(report.agent).toMatchObject({ profile: 'claude', sessionId, resumedRuns: 1 });

    // The retried try ran `claude ... --resume <the interrupted session>` (its transcript header says so)...
    const transcript = readFileSync(path.join(runDir, 'transcript.log'), 'utf8');
    expect(transcript).toContain(`resuming session ${sessionId} (interrupted)`);
    // ...and its requests carry the interrupted run's turns: the first prompt and the write it made.
    const after = standIn.requests.slice(beforeKill).map((r) => JSON.stringify(r.body));
    const resumed = after.filter((t) => t.includes('was cut off'));
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    expect(resumed[0]).toContain('crash test');
    expect(resumed[0]).toContain('toolu_standin_01');
    expect(git(repo, 'show', `${report.commit}:alpha.txt`)).toBe('hello');
    console.log(
      `crash resume: ${after.length} request(s) after the kill; the first resumed one has ` +
        `${(JSON.parse(resumed[0]!) as { messages: unknown[] }).messages.length} messages, ${Buffer.byteLength(resumed[0]!)} bytes`,
    );
  });
});
