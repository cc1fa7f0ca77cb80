/**
 * Shared set-up of the modes tests (test/modes-*.test.ts): a sample repo whose agents are the demo agent
 * behind a small wrapper that logs each run's role, session and review mode, a saga started through the
 * same code as `saga start`, and parsers for manifest.md (parseManifest) and decisions.md (`### ` entries).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { prepareSaga, startSaga } from '../../src/client/commands/start';
import { respond } from '../../src/client/saga-client';
import { createSampleRepo, greetingPlan } from '../../src/demo/sample-repo';
import { parseManifest, type ManifestFront } from '../../src/domain/record/manifest';
import type { SagaInput } from '../../src/domain/saga/saga-input';
import type { Answer } from '../../src/domain/contract/state';
import { PROJECT_ROOT } from '../../src/project-root';
import { waitForPending, type SagaTestEnv } from './saga-env';

export const DEMO_AGENT = path.join(PROJECT_ROOT, 'agents', 'demo-agent.js');

/** One line per agent run, written by the wrapper before it hands over to the demo agent. */
export interface AgentRunLog {
  role: string;
  stage: string;
  taskId: string;
  attempt: string;
  session: string | null;
  reviewMode: string | null;
  pid: number;
}

/** The greeting plan cut to one milestone with one task, so a whole saga runs in seconds. */
export function oneTaskPlan(): Record<string, unknown> {
  const plan = greetingPlan() as {
    exit_criteria: unknown[];
    milestones: { tasks: unknown[] }[];
  } & Record<string, unknown>;
  const first = plan.milestones[0]!;
  return {
    ...plan,
    exit_criteria: plan.exit_criteria.slice(0, 1),
    milestones: [{ ...first, tasks: first.tasks.slice(0, 1) }],
  };
}

export interface ModesSagaOptions {
  name: string;
  args: string;
  /** Demo-script entries (planner, reviewer, tasks...) merged over the sample repo's defaults. */
  script?: Record<string, unknown>;
  /** Start with `--plan` (no planner questions); the plan is written to a file outside the repo. */
  plan?: Record<string, unknown>;
  /**
   * Agent profile (`--agent`): `demo` (says `subagent_dispatch: true`), `plain` (says nothing, so it can),
   * `solo` (`subagent_dispatch: false`) or `broken` (cannot spawn; `subagent_dispatch: false`).
   */
  agent?: 'demo' | 'plain' | 'solo' | 'broken';
  /** `.sage/config.yaml` text (flag defaults). */
  sageConfig?: string;
  /** More files committed in the repo (relative path → text), e.g. `.sage/conventions.md`. */
  files?: Record<string, string>;
  /** More lines of the `demo` profile (indented 4 spaces), e.g. `    idle_timeout: 2s\n`. */
  demoProfile?: string;
  /** Runs once the saga waits at `confirm-name`, before it is confirmed (nothing of the saga runs yet). */
  beforeConfirm?: (repo: string) => void;
}

export interface ModesSaga {
  name: string;
  input: SagaInput;
  repo: string;
  sagaDir: string;
  agentLog: string;
  runs(): AgentRunLog[];
  manifest(): ManifestFront;
  /** decisions.md entries, newest first; the per-answer audit entries only when asked for. */
  decisions(opts?: { withAnswers?: boolean }): DecisionEntry[];
  answer(id: string, choice: string, text?: string): Promise<Answer>;
}

/** Creates the repo, starts the saga, waits for `confirm-name` and confirms it. */
export async function startModesSaga(env: SagaTestEnv, opts: ModesSagaOptions): Promise<ModesSaga> {
  const dir = env.tmp(opts.name);
  const repo = path.join(dir, 'repo');
  const agentLog = path.join(dir, 'agent-runs.jsonl');
  const wrapper = path.join(dir, 'agent-wrapper.js');
  writeFileSync(
    wrapper,
    `'use strict';\nconst e = process.env;\nrequire('node:fs').appendFileSync(${JSON.stringify(agentLog)}, JSON.stringify({ role: e.SAGA_ROLE, stage: e.SAGA_STAGE, taskId: e.SAGA_TASK_ID, attempt: e.SAGA_ATTEMPT, session: e.SAGA_SESSION || null, reviewMode: e.SAGA_REVIEW_MODE || null, pid: process.pid }) + '\\n');\nrequire(${JSON.stringify(DEMO_AGENT)});\n`,
  );
  writeFileSync(agentLog, '');
  const command = JSON.stringify(['{node}', wrapper]);
  const files = {
    ...opts.files,
    ...(opts.sageConfig !== undefined ? { '.sage/config.yaml': opts.sageConfig } : {}),
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
    writeFileSync(path.join(repo, rel), text);
  }
  createSampleRepo(repo, {
    script: opts.script,
    configExtra:
      // The wrapper logs every run to a file outside its worktree, which confinement would not let it
      // write: these tests of the modes run unconfined (confinement: test/integration/activities/sandbox/rogue-agent.test.ts and others).
      'sandbox: none\n' +
      'agents:\n' +
      `  demo:\n    command: ${command}\n    subagent_dispatch: true\n${opts.demoProfile ?? ''}` +
      `  plain:\n    command: ${command}\n` +
      `  solo:\n    command: ${command}\n    subagent_dispatch: false\n` +
      '  broken:\n    command: ["/nonexistent/saga-modes-reviewer"]\n    subagent_dispatch: false\n',
  });
  let planFile: string | undefined;
  if (opts.plan) {
    planFile = path.join(dir, 'plan.json');
    writeFileSync(planFile, JSON.stringify(opts.plan));
  }
  const input = await prepareSaga({
    repo,
    // The repository's config is the test's own (unconfined wrapper profiles): trusted.
    trustRepoConfig: true,
    argumentsText: opts.args,
    name: opts.name,
    agent: opts.agent ?? 'demo',
    // `broken` is meant to fail when the saga runs it, not to be refused at start.
    skipAgentCheck: opts.agent === 'broken',
    ...(planFile ? { plan: planFile } : {}),
  });
  await startSaga(env.client, input);
  await waitForPending(env, opts.name, 'confirm-name');
  opts.beforeConfirm?.(repo);
  const answer = (id: string, choice: string, text?: string) =>
    respond(env.client, opts.name, { interactionId: id, choice, user: 'tester', ...(text ? { text } : {}) });
  await answer('confirm-name', 'confirm');
  return {
    name: opts.name,
    input,
    repo,
    sagaDir: input.sagaDir,
    agentLog,
    runs: () =>
      readFileSync(agentLog, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AgentRunLog),
    manifest: () => parseManifest(readFileSync(path.join(input.sagaDir, 'manifest.md'), 'utf8')).front,
    decisions: ({ withAnswers = false } = {}) =>
      parseDecisions(readFileSync(path.join(input.sagaDir, 'decisions.md'), 'utf8')).filter(
        (entry) => withAnswers || !ANSWER_ENTRY.test(entry.title),
      ),
    answer,
  };
}

/** The entry every answer gets (`<user> answered <id>: <choice>`); the modes tests look at the others. */
const ANSWER_ENTRY = /^\S+ answered \S+: /;

export interface DecisionEntry {
  /** `YYYY-MM-DD HH:MM` (UTC). */
  stamp: string;
  title: string;
  lines: string[];
}

/** decisions.md entries, newest first, by their `### <stamp> — <title>` headers. */
export function parseDecisions(text: string): DecisionEntry[] {
  const [header, ...entries] = text.split(/^### /m);
  if (!header!.startsWith('# Decisions')) throw new Error(`decisions.md: unexpected header: ${header}`);
  return entries.map((entry) => {
    const [first, ...rest] = entry.trimEnd().split('\n');
    const match = /^(\d{4}-\d\d-\d\d \d\d:\d\d) — (.+)$/.exec(first!);
    if (!match) throw new Error(`decisions.md: bad entry header '### ${first}'`);
    return { stamp: match[1]!, title: match[2]!, lines: rest.filter((l) => l.trim() !== '') };
  });
}

/** The flags as the manifest stores them: the parser's JSON without goal and error. */
export function manifestFlagsOf(flags: SagaInput['flags']): Omit<SagaInput['flags'], 'goal' | 'error'> {
  const { goal: _goal, error: _error, ...rest } = flags;
  return rest;
}

/** The machine context (the last ```json block) of a prompt's text. */
export function promptContext(prompt: string): Record<string, unknown> {
  const blocks = [...prompt.matchAll(/^```json\n([\s\S]*?)\n```$/gm)];
  return JSON.parse(blocks[blocks.length - 1]![1]!) as Record<string, unknown>;
}

/** The machine context of an agent run's prompt file (`runs/<label>/prompt.md`). */
export const runContext = (sagaDir: string, label: string): Record<string, unknown> =>
  promptContext(readFileSync(path.join(sagaDir, 'runs', label, 'prompt.md'), 'utf8'));

/** Findings in the reviewer's header format with `n` major issues. */
export const majors = (n: number, what = 'issue'): string =>
  `CRITICAL: None\nMAJOR:\n${Array.from({ length: n }, (_, i) => `- ${what} ${i + 1}`).join('\n')}\nMINOR-substantive: None\n`;
