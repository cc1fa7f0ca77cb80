/**
 * The built-in presets with the real agent CLIs (installed into tools/agent-clis by the global setup), each
 * against a scripted stand-in of its model API on 127.0.0.1. The presets run unmodified apart from the
 * environment that points them at the stand-in. A whole saga per CLI: the agent writes a file with its
 * edit tool and runs a command with its shell tool, the task's check passes on both, the commit lands on
 * the task branch and the integration branch, and usage (and cost) reach `saga status --json`. Then the
 * same saga with a stand-in that refuses the key: the task ends blocked after ONE agent run, with the
 * CLI's reason in the status and the escalation, and no re-delegation.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import YAML from 'yaml';
import { executeAgentRun } from '../../../../src/activities/agents';
import { resolveAgentProfile } from '../../../../src/domain/config/profile-resolution';
import { parseSagaConfigText } from '../../../../src/domain/config/config-text';
import { phaseWorkflowId } from '../../../../src/domain/contract/naming';
import { classifyReview } from '../../../../src/domain/fleet/review';
import { PROJECT_ROOT } from '../../../../src/project-root';
import { respond } from '../../../../src/client/saga-client';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { runSaga } from '../../../harness/cli';
import { createFleetRepo, git, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import { AGENT_CLI_BIN, WORKFLOW_BUNDLE } from '../../../harness/server';
import { createSagaTestEnv, waitForStatus, type SagaTestEnv } from '../../../harness/saga-env';
import { claudeEndpoint, startAnthropicStandIn } from '../../../standins/anthropic';
import { geminiEndpoint, startGeminiStandIn } from '../../../standins/gemini';
import { aiderEndpoint, opencodeEndpoint, startOpenAIChatStandIn } from '../../../standins/openai-chat';
import { codexEndpoint, startOpenAIResponsesStandIn } from '../../../standins/openai-responses';
import type { ModelScript, StandIn } from '../../../standins/script';

interface CliCase {
  agent: string;
  start: (script: ModelScript) => Promise<StandIn>;
  endpoint: (standIn: StandIn, home: string) => Promise<Record<string, string>>;
  /** Extra profile fields and config for cost estimates (CLIs that report tokens but no cost). */
  profile?: Record<string, unknown>;
  prices?: Record<string, { input: number; output: number; cached?: number }>;
  /** The CLI reports its own cost. */
  reportsCost: boolean;
  /** Whether its output names a session (aider has none). */
  hasSession?: boolean;
  /** aider never runs commands: its script only writes, and its check only looks for the file. */
  editsOnly?: boolean;
  /**
   * Its endpoint lives only in the CLI's own config (config.toml, opencode's config), not in a `*_BASE_URL`
   * variable and not in a `network:` line: saga reads it there and allows it.
   */
  endpointInConfigFile?: boolean;
}

const CASES: CliCase[] = [
  { agent: 'claude', start: startAnthropicStandIn, endpoint: claudeEndpoint, reportsCost: true },
  {
    agent: 'codex',
    start: startOpenAIResponsesStandIn,
    endpoint: codexEndpoint,
    // Codex names no model in its JSON output: the profile says which one it runs, for the price table.
    profile: { model: 'gpt-5.5' },
    prices: { 'gpt-5.5': { input: 2, output: 16, cached: 0.2 } },
    reportsCost: false,
    endpointInConfigFile: true,
  },
  {
    agent: 'gemini',
    start: startGeminiStandIn,
    endpoint: geminiEndpoint,
    prices: { 'gemini-3.8-flash': { input: 0.5, output: 3 } },
    reportsCost: false,
  },
  {
    agent: 'opencode',
    start: startOpenAIChatStandIn,
    endpoint: opencodeEndpoint,
    reportsCost: true,
    endpointInConfigFile: true,
  },
  {
    agent: 'aider',
    start: startOpenAIChatStandIn,
    endpoint: aiderEndpoint,
    reportsCost: true,
    hasSession: false,
    editsOnly: true,
  },
];

const SCRIPT: ModelScript = {
  steps: [
    { kind: 'write', path: 'alpha.txt', content: 'hello\n' },
    { kind: 'shell', command: `node -e "require('fs').writeFileSync('beta.txt', 'ran')"` },
  ],
  finalText: 'Wrote alpha.txt and ran the command that writes beta.txt.',
  usage: { input: 1000, output: 100 },
};

const CHECK = 'test "$(cat alpha.txt)" = hello && test "$(cat beta.txt)" = ran';
const EDIT_ONLY: ModelScript = { ...SCRIPT, steps: SCRIPT.steps.slice(0, 1), finalText: 'Wrote alpha.txt.' };
const EDIT_CHECK = 'test "$(cat alpha.txt)" = hello';

const plan = (name: string, check: string) => ({
  name,
  problem: 'A file written by the agent and a command run by it.',
  scope: { in: ['alpha.txt', 'beta.txt'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'the files are there', check }],
  milestones: [
    {
      id: 1,
      slug: 'files',
      title: 'Files',
      depends_on: [],
      goal: 'alpha.txt and beta.txt.',
      validation: [{ text: 'the files are there', check }],
      tasks: [
        {
          ...planTask(1, 'alpha-beta', ['alpha.txt', 'beta.txt'], check),
          scope: 'Write alpha.txt containing "hello", then run the node command that writes beta.txt.',
        },
      ],
    },
  ],
});

let env: SagaTestEnv;
const savedPath = process.env.PATH;

beforeAll(async () => {
  // As a user with the CLIs installed: on PATH.
  process.env.PATH = `${AGENT_CLI_BIN}${path.delimiter}${savedPath ?? ''}`;
  env = await createSagaTestEnv('agent-clis');
  await env.startWorkers();
});

afterAll(async () => {
  await env?.close();
  process.env.PATH = savedPath;
});

/** The preset's profile pointed at the stand-in, with no `network:` line: saga finds the endpoint itself. */
async function profileFor(c: CliCase, standIn: StandIn, home: string) {
  return { ...c.profile, ...RUN_LIMITS, env: await c.endpoint(standIn, home) };
}

/** A repo whose saga.config.yaml points the preset at the stand-in and nothing more. */
async function repoFor(c: CliCase, standIn: StandIn, name: string) {
  const dir = env.tmp(name);
  const home = path.join(dir, 'agent-home');
  mkdirSync(home, { recursive: true });
  const config = {
    agents: {
      [c.agent]: await profileFor(c, standIn, home),
    },
    ...(c.prices ? { prices: c.prices } : {}),
  };
  return createFleetRepo(dir, {
    plan: plan(name, c.editsOnly ? EDIT_CHECK : CHECK),
    script: {},
    config: YAML.stringify(config),
  });
}

const taskOf = (s: SagaStatus) => s.milestones[0]!.tasks[0]!;

jest.setTimeout(300_000);
// A third-party CLI that stalls once (seen once with codex under a loaded machine) gets one more go; the
// profiles below also cap each run, so a stall fails in minutes, not at the suite's limit.
jest.retryTimes(1, { logErrorsBeforeRetry: true });
const RUN_LIMITS = { timeout: '2m', idle_timeout: '90s' };

describe.each(CASES)('the $agent preset with the real CLI', (c) => {
  test('a whole saga: the agent edits and runs a command, the work lands, usage reaches the status', async () => {
    const standIn = await c.start(c.editsOnly ? EDIT_ONLY : SCRIPT);
    try {
      const name = `cli-${c.agent}`;
      const { repo, planFile } = await repoFor(c, standIn, name);
      await startApprovedSaga(env, { repo, planFile, name, args: 'Write two files', agent: c.agent });
      const status = await waitForStatus(
        env,
        name,
        (s) =>
          s.phase === 'failed' || s.pending.some((p) => p.kind === 'acceptance' || p.kind === 'escalation'),
        240_000,
      );
      const task = taskOf(status);
      expect({ phase: status.phase, reason: task.reason }).toEqual({ phase: 'acceptance', reason: null });
      expect(task.status).toBe('integrated');
      expect(task.attempts).toBe(1);
      // The commit on the task branch and the integration branch hold the agent's two files.
      expect(git(repo, 'show', `${task.branch}:alpha.txt`)).toBe('hello');
      if (!c.editsOnly) expect(git(repo, 'show', `${status.integrationBranch}:beta.txt`)).toBe('ran');
      // Nothing landed outside the worktree: not in the user's checkout, not in the worker's directory.
      expect(git(repo, 'status', '--porcelain')).toBe('');
      expect(existsSync(path.join(process.cwd(), 'alpha.txt'))).toBe(false);
      // Usage from the CLI's own output (3 model calls of 1000 in / 100 out; aider counts its own tokens).
      expect(task.usage?.inputTokens).toBeGreaterThanOrEqual(c.editsOnly ? 1000 : 3000);
      expect(task.usage?.outputTokens).toBeGreaterThanOrEqual(c.editsOnly ? 10 : 300);
      expect(task.usage?.costUsd).toBeGreaterThan(0);
      expect(Boolean(task.usage?.costEstimated)).toBe(!c.reportsCost);
      expect(status.usage?.costUsd).toBeCloseTo(task.usage!.costUsd, 6);
      expect(task.agent?.profile).toBe(c.agent);
      if (c.hasSession === false) expect(task.agent?.sessionId).toBeNull();
      else expect(task.agent?.sessionId).toMatch(/\S{8,}/);
      const acceptance = status.pending.find((p) => p.kind === 'acceptance')!;
      // `saga logs` shows the CLI's JSON stream as readable lines: the tool calls, no raw events.
      const logs = await runSaga(['logs', name, '1.1'], env.cliEnv);
      expect(logs.code).toBe(0);
      expect(logs.stdout).toMatch(/alpha\.txt/);
      expect(logs.stdout).not.toMatch(/^\{"type"/m);
      await respond(env.client, name, { interactionId: acceptance.id, choice: 'accept', user: 'test' });
      await waitForStatus(env, name, (s) => s.phase === 'complete', 60_000);
    } finally {
      await standIn.close();
    }
  });

  test('an unauthenticated agent: blocked after one run, its reason in the status, no retry', async () => {
    const standIn = await c.start({ ...SCRIPT, fail: 'auth' });
    try {
      const name = `cli-${c.agent}-auth`;
      const { repo, planFile } = await repoFor(c, standIn, name);
      await startApprovedSaga(env, { repo, planFile, name, args: 'Write two files', agent: c.agent });
      // The escalation and the task's state travel apart (interaction vs batched progress): wait for both.
      const status = await waitForStatus(
        env,
        name,
        (s) => s.pending.some((p) => p.kind === 'escalation') && taskOf(s).status === 'blocked',
        240_000,
      );
      const task = taskOf(status);
      expect(task.status).toBe('blocked');
      expect(task.attempts).toBe(1);
      expect(task.delegations).toBe(1);
      expect(task.reason).toMatch(
        new RegExp(`^agent ${c.agent} is not authenticated \\(.+\\) — set its API key`),
      );
      expect(task.error).toBe(task.reason);
      const escalation = status.pending.find((p) => p.kind === 'escalation')!;
      expect(escalation.prompt).toContain(`cannot run its agent: agent ${c.agent} is not authenticated`);
      await respond(env.client, name, { interactionId: escalation.id, choice: 'abort', user: 'test' });
      // The task and fleet histories that took this path replay on the current code.
      await waitForStatus(env, name, (s) => ['cancelled', 'failed', 'complete'].includes(s.phase), 60_000);
      const histories = await Promise.all(
        [task.workflowId!, phaseWorkflowId(name, 'implementation')].map(async (workflowId) => ({
          workflowId,
          history: await env.client.workflow.getHandle(workflowId).fetchHistory(),
        })),
      );
      const failures: string[] = [];
      for await (const result of Worker.runReplayHistories(
        { workflowBundle: { codePath: WORKFLOW_BUNDLE } },
        histories,
      ))
        if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
      expect(failures).toEqual([]);
    } finally {
      await standIn.close();
    }
  });
});

/** A reviewer's findings and a planner's JSON come inside each CLI's JSON events: they must be unwrapped. */
describe.each(CASES.filter((c) => !c.editsOnly))(
  'the $agent preset answering as reviewer and planner',
  (c) => {
    const run = async (finalText: string, role: 'reviewer' | 'planner') => {
      const standIn = await c.start({ steps: [], finalText });
      try {
        const dir = env.tmp(`${c.agent}-${role}`);
        const home = path.join(dir, 'agent-home');
        mkdirSync(home, { recursive: true });
        const config = parseSagaConfigText(
          YAML.stringify({
            agents: { [c.agent]: await profileFor(c, standIn, home) },
          }),
          'saga.config.yaml',
        );
        if (!config.ok) throw new Error(config.errors.join('\n'));
        return await executeAgentRun(
          {
            sagaName: 'answers',
            sagaDir: path.join(dir, 'saga'),
            role,
            stage: role === 'reviewer' ? 'task' : 'plan',
            taskId: '1.1',
            attempt: 1,
            profile: resolveAgentProfile(config.config, c.agent),
            prompt: 'Answer.',
            workdir: dir,
            runLabel: `${role}-1`,
          },
          { nodePath: process.execPath, sagaRoot: PROJECT_ROOT },
          { heartbeat: () => undefined, signal: new AbortController().signal, label: 'test' },
        );
      } finally {
        await standIn.close();
      }
    };

    test('review findings are counted from the final text, not from the JSON envelope', async () => {
      const result = await run(
        'Review done.\n\nCRITICAL:\n- greet() returns undefined\nMAJOR: None\n',
        'reviewer',
      );
      expect(result.exitCode).toBe(0);
      expect(classifyReview(result.findings ?? '')).toMatchObject({ critical: 1, major: 0 });
    });

    test("a planner's last ```json block is read from the final text", async () => {
      const result = await run('Here it is:\n```json\n{"problem": "p", "questions": []}\n```\n', 'planner');
      expect(result.reportError).toBeNull();
      expect(result.report).toEqual({ problem: 'p', questions: [] });
    });
  },
);
