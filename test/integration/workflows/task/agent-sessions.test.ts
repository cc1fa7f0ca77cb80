/**
 * Agent sessions across attempts (docs/PROCEDURE.md §3.5), with the real Claude Code and Codex CLIs against their scripted
 * stand-ins: a task whose check fails once gets a fix attempt that RESUMES the agent's session (the
 * stand-in receives the first attempt's turns), and with `resume: false` the fix attempt starts cold, said
 * so in the task's status. A session the CLI does not know is run fresh in the same attempt, logged. While
 * an agent runs, `saga status --watch` shows its attempt, session, tokens and cost so far.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { executeAgentRun } from '../../../../src/activities/agents';
import { renderRunningAgents, runningAgents, type RunningAgent } from '../../../../src/client/running-agents';
import { resolveAgentProfile } from '../../../../src/domain/config/profile-resolution';
import { parseSagaConfigText } from '../../../../src/domain/config/config-text';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { PROJECT_ROOT } from '../../../../src/project-root';
import { createFleetRepo, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import { AGENT_CLI_BIN } from '../../../harness/server';
import { createSagaTestEnv, sagaStatus, waitForStatus, type SagaTestEnv } from '../../../harness/saga-env';
import { claudeEndpoint, startAnthropicStandIn } from '../../../standins/anthropic';
import { codexEndpoint, startOpenAIResponsesStandIn } from '../../../standins/openai-responses';
import type { ModelScript, RecordedRequest, StandIn } from '../../../standins/script';

interface CliCase {
  agent: 'claude' | 'codex';
  start: (script: ModelScript) => Promise<StandIn>;
  endpoint: (standIn: StandIn, home: string) => Promise<Record<string, string>>;
  profile?: Record<string, unknown>;
  /** The conversation items of one model request. */
  turns: (body: Record<string, unknown>) => unknown[];
}

const CASES: CliCase[] = [
  {
    agent: 'claude',
    start: startAnthropicStandIn,
    endpoint: claudeEndpoint,
    turns: (b) => (Array.isArray(b.messages) ? b.messages : []),
  },
  {
    agent: 'codex',
    start: startOpenAIResponsesStandIn,
    endpoint: codexEndpoint,
    profile: { model: 'gpt-5.5' },
    turns: (b) => (Array.isArray(b.input) ? b.input : []),
  },
];

const RUN_LIMITS = { timeout: '2m', idle_timeout: '90s' };
const SCOPE = 'Write alpha.txt containing "hello" (sessions test).';
/** Words of the scope that read the same inside the prompt's JSON context (no quotes to escape). */
const SCOPE_WORDS = 'Write alpha.txt containing';
const SCRIPT: ModelScript = {
  steps: [{ kind: 'write', path: 'alpha.txt', content: 'hello\n' }],
  finalText: 'Wrote alpha.txt.',
};
/** The resume prompt's own words (src/activities/agents/prompt.ts composeResumePrompt). */
const RESUME_WORDS = 'did not pass its checks';

let env: SagaTestEnv;
const savedPath = process.env.PATH;
beforeAll(async () => {
  process.env.PATH = `${AGENT_CLI_BIN}${path.delimiter}${savedPath ?? ''}`;
  env = await createSagaTestEnv('agent-sessions');
  await env.startWorkers();
});
afterAll(async () => {
  await env?.close();
  process.env.PATH = savedPath;
});

jest.setTimeout(300_000);
jest.retryTimes(1, { logErrorsBeforeRetry: true });

/** A one-task saga whose check fails the first time it runs and passes after (a marker outside the repo). */
async function sagaRepo(
  c: CliCase,
  standIn: StandIn,
  name: string,
  profileExtra: Record<string, unknown> = {},
) {
  const dir = env.tmp(name);
  const home = path.join(dir, 'agent-home');
  mkdirSync(home, { recursive: true });
  const marker = path.join(dir, 'checked-once');
  const check = `if [ -f '${marker}' ]; then test "$(cat alpha.txt)" = hello; else touch '${marker}'; exit 1; fi`;
  const config = {
    // The check keeps its state outside the worktree (its first run fails): checks run unconfined here,
    // the agent stays confined (its profile's `sandbox: auto`).
    sandbox: 'none',
    agents: {
      [c.agent]: {
        ...c.profile,
        ...RUN_LIMITS,
        ...profileExtra,
        sandbox: 'auto',
        network: [`127.0.0.1:${new URL(standIn.url).port}`],
        env: await c.endpoint(standIn, home),
      },
    },
  };
  const plan = {
    name,
    problem: 'One file written by the agent.',
    scope: { in: ['alpha.txt'], out: [], delegated: [] },
    exit_criteria: [{ id: 'E1', text: 'alpha is there', check: 'test -f alpha.txt' }],
    milestones: [
      {
        id: 1,
        slug: 'files',
        title: 'Files',
        depends_on: [],
        goal: 'alpha.txt.',
        validation: [{ text: 'alpha is there', check: 'test -f alpha.txt' }],
        tasks: [{ ...planTask(1, 'alpha', ['alpha.txt'], check), scope: SCOPE }],
      },
    ],
  };
  return createFleetRepo(dir, { plan, script: {}, config: YAML.stringify(config) });
}

const taskOf = (s: SagaStatus) => s.milestones[0]!.tasks[0]!;
const text = (r: RecordedRequest) => JSON.stringify(r.body);
/** Whether the request's conversation holds `words` (prompts travel as JSON strings inside the body). */
const holds = (r: RecordedRequest, words: string) => text(r).includes(JSON.stringify(words).slice(1, -1));
const bodyOf = (r: RecordedRequest) => (r.body ?? {}) as Record<string, unknown>;
/** Model calls of the agent loop (not titles or other side requests). */
const modelCalls = (standIn: StandIn) =>
  standIn.requests.filter((r) => r.method === 'POST' && holds(r, SCOPE_WORDS));

/** Saga names stay unique when jest retries a test (a stalled third-party CLI gets one more go). */
let sagaCount = 0;

async function runToAcceptance(c: CliCase, base: string, profileExtra: Record<string, unknown> = {}) {
  const name = `${base}-${++sagaCount}`;
  const standIn = await c.start(SCRIPT);
  try {
    const { repo, planFile } = await sagaRepo(c, standIn, name, profileExtra);
    await startApprovedSaga(env, { repo, planFile, name, args: 'Write a file', agent: c.agent });
    const status = await waitForStatus(
      env,
      name,
      (s) => s.phase === 'failed' || s.pending.some((p) => ['acceptance', 'escalation'].includes(p.kind)),
      240_000,
    );
    if (process.env.SESSIONS_DUMP)
      writeFileSync(path.join(process.env.SESSIONS_DUMP, `${name}.json`), JSON.stringify(standIn.requests));
    return { status, calls: modelCalls(standIn) };
  } finally {
    await standIn.close();
  }
}

const size = (c: CliCase, r: RecordedRequest) => ({
  turns: c.turns(bodyOf(r)).length,
  bytes: Buffer.byteLength(text(r)),
});

describe.each(CASES)('$agent: sessions across attempts', (c) => {
  test("a fix attempt resumes the session: the stand-in receives the first attempt's turns", async () => {
    const { status, calls } = await runToAcceptance(c, `sess-${c.agent}`);
    const task = taskOf(status);
    expect({ phase: status.phase, status: task.status, attempts: task.attempts }).toEqual({
      phase: 'acceptance',
      status: 'integrated',
      attempts: 2,
    });
    expect(task.agent).toMatchObject({ profile: c.agent, resumedRuns: 1 });
    expect(task.agent?.sessionNote).toBeUndefined();
    const resumed = calls.filter((r) => holds(r, RESUME_WORDS));
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    // The resumed request carries attempt 1: its prompt (the task's scope), its tool call and its result.
    const first = resumed[0]!;
    const firstPrompt = calls[0]!;
    expect(holds(first, '"attempt": 1')).toBe(true);
    expect(text(first)).toContain('alpha.txt');
    expect(c.turns(bodyOf(first)).length).toBeGreaterThan(c.turns(bodyOf(firstPrompt)).length);
    // The run folder records the session the fix attempt continued.
    const runDirs = path.join(status.sagaDir, 'runs');
    const a2 = JSON.parse(readFileSync(path.join(runDirs, 'm1t1-d1-a2', 'agent.json'), 'utf8'));
    expect(a2).toMatchObject({
      profile: c.agent,
      resumedSession: task.agent?.sessionId ?? expect.any(String),
    });
    console.log(
      `${c.agent} resumed fix attempt: first request ${JSON.stringify(size(c, first))}, ` +
        `${calls.length - calls.indexOf(first)} model call(s) in the attempt; attempt 1's first request ${JSON.stringify(size(c, firstPrompt))}`,
    );
  });

  test('resume: false: the fix attempt starts cold, said so in the task, and still passes', async () => {
    const { status, calls } = await runToAcceptance(c, `cold-${c.agent}`, { resume: false });
    const task = taskOf(status);
    expect({ status: task.status, attempts: task.attempts }).toEqual({ status: 'integrated', attempts: 2 });
    expect(task.agent?.resumedRuns).toBeUndefined();
    expect(task.agent?.sessionNote).toMatch(
      new RegExp(`^attempt 2 started a fresh session: profile ${c.agent} does not resume sessions`),
    );
    expect(calls.some((r) => holds(r, RESUME_WORDS))).toBe(false);
    const cold = calls.filter((r) => holds(r, '"attempt": 2'));
    expect(cold.length).toBeGreaterThanOrEqual(1);
    // A cold start: none of attempt 1's turns.
    expect(holds(cold[0]!, '"attempt": 1')).toBe(false);
    console.log(
      `${c.agent} cold fix attempt: first request ${JSON.stringify(size(c, cold[0]!))}, ` +
        `${calls.length - calls.indexOf(cold[0]!)} model call(s) in the attempt`,
    );
  });

  test('a session the CLI does not know: the same run starts fresh, and says why', async () => {
    const standIn = await c.start(SCRIPT);
    try {
      const dir = env.tmp(`${c.agent}-unknown`);
      const home = path.join(dir, 'agent-home');
      mkdirSync(home, { recursive: true });
      const config = parseSagaConfigText(
        YAML.stringify({
          agents: {
            [c.agent]: {
              ...c.profile,
              ...RUN_LIMITS,
              network: [`127.0.0.1:${new URL(standIn.url).port}`],
              env: await c.endpoint(standIn, home),
            },
          },
        }),
        'saga.config.yaml',
      );
      if (!config.ok) throw new Error(config.errors.join('\n'));
      const unknown = randomUUID();
      const result = await executeAgentRun(
        {
          sagaName: 'sessions',
          sagaDir: path.join(dir, 'saga'),
          role: 'implementer',
          stage: 'task',
          taskId: '1.1',
          attempt: 2,
          profile: resolveAgentProfile(config.config, c.agent),
          prompt: SCOPE,
          context: { notes: ['Check failed: alpha is there'] },
          workdir: dir,
          runLabel: 'unknown-a2',
          resume: { sessionId: unknown, host: null, reason: 'retry' },
        },
        { nodePath: process.execPath, sagaRoot: PROJECT_ROOT },
        { heartbeat: () => undefined, signal: new AbortController().signal, label: 'test' },
      );
      expect(result.resumeFallback).toBe(`${c.agent} does not know session ${unknown}`);
      expect(result.resumedSession).toBeNull();
      expect(result.exitCode).toBe(0);
      expect(result.failure ?? null).toBeNull();
      expect(result.sessionId).toMatch(/\S{8,}/);
      expect(result.sessionId).not.toBe(unknown);
      expect(readFileSync(path.join(dir, 'alpha.txt'), 'utf8')).toBe('hello\n');
      expect(readFileSync(result.transcriptPath, 'utf8')).toContain(
        `fresh session: ${c.agent} does not know session ${unknown}`,
      );
    } finally {
      await standIn.close();
    }
  });
});

test('status --watch: a running agent shows its attempt, session, tokens and cost so far', async () => {
  const c = CASES[0]!;
  // Claude reports tokens with each assistant message; the slow shell step keeps it running meanwhile.
  const standIn = await c.start({
    steps: [
      { kind: 'write', path: 'alpha.txt', content: 'hello\n' },
      { kind: 'shell', command: 'sleep 12' },
    ],
    finalText: 'Wrote alpha.txt and waited.',
  });
  try {
    const name = 'sess-live';
    const dir = env.tmp(name);
    const home = path.join(dir, 'agent-home');
    mkdirSync(home, { recursive: true });
    const config = {
      agents: { claude: { ...RUN_LIMITS, env: await c.endpoint(standIn, home) } },
      // Claude's cost comes with its final result; until then it is priced from the table.
      prices: { 'claude-opus-5-5': { input: 5, output: 25 } },
    };
    const plan = {
      name,
      problem: 'One file.',
      scope: { in: ['alpha.txt'], out: [], delegated: [] },
      exit_criteria: [{ id: 'E1', text: 'alpha', check: 'test -f alpha.txt' }],
      milestones: [
        {
          id: 1,
          slug: 'files',
          title: 'Files',
          depends_on: [],
          goal: 'alpha.txt.',
          validation: [{ text: 'alpha', check: 'test -f alpha.txt' }],
          tasks: [{ ...planTask(1, 'alpha', ['alpha.txt'], 'test -f alpha.txt'), scope: SCOPE }],
        },
      ],
    };
    const { repo, planFile } = createFleetRepo(dir, { plan, script: {}, config: YAML.stringify(config) });
    await startApprovedSaga(env, { repo, planFile, name, args: 'Write a file', agent: 'claude' });
    let seen: RunningAgent | undefined;
    const deadline = Date.now() + 120_000;
    while (!seen && Date.now() < deadline) {
      const status = await sagaStatus(env, name);
      const agents = await runningAgents(env.client, status);
      seen = agents.find((a) => (a.usage?.inputTokens ?? 0) >= 2000 && a.sessionId);
      if (!seen) await new Promise((r) => setTimeout(r, 500));
    }
    expect(seen).toBeDefined();
    const live = seen!;
    expect(live).toMatchObject({ taskId: '1.1', attempt: 1, activity: 'runTaskAttempt' });
    expect(live.usage!.costUsd).toBeGreaterThan(0);
    expect(live.usage!.costEstimated).toBe(true);
    expect(live.elapsedMs).toBeGreaterThan(0);
    const [, line] = renderRunningAgents([live]);
    expect(line).toMatch(
      /^ {2}1\.1 alpha \(attempt 1, delegation 1, \d+s\): .*\[~\$0\.\d\d \(estimate\), \d+ in \/ \d+ out tokens so far\] — \S/,
    );
    console.log(`live view: ${line}`);
    await waitForStatus(env, name, (s) => s.pending.some((p) => p.kind === 'acceptance'), 120_000);
  } finally {
    await standIn.close();
  }
});
