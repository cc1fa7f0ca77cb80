/**
 * Helpers for the fleet tests: a git repo with a custom plan, demo-agent script and saga.config.yaml; a saga
 * started from it and taken through intake and plan approval; and what the server knows about its runs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import YAML from 'yaml';
import { prepareSaga, startSaga } from '../../src/client/commands/start';
import { respond } from '../../src/client/saga-client';
import type { SagaInput } from '../../src/domain/saga/saga-input';
import type { SagaStatus } from '../../src/domain/contract/state';
import { waitForPending, type SagaTestEnv } from './saga-env';

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=Fleet Test', '-c', 'user.email=fleet@test.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

export interface FleetRepoOptions {
  plan: Record<string, unknown>;
  /** The demo agent's script (agents/demo-agent.js documents the format). */
  script: Record<string, unknown>;
  /**
   * Extra saga.config.yaml lines: committed in the repo and also written as the user's own file beside it
   * (`<dir>/saga.config.yaml`), which startApprovedSaga passes as `--config`, so a repo setting that widens
   * what runs (commands, sandbox, set-up) is the user's word, as saga start wants it.
   */
  config?: string;
  /** Extra files committed in the repo (path → content). */
  files?: Record<string, string>;
}

/** Creates `<dir>/repo` (a git repo on `main`) and `<dir>/plan.yaml`; worktrees land beside the repo. */
export function createFleetRepo(dir: string, options: FleetRepoOptions): { repo: string; planFile: string } {
  const repo = path.join(dir, 'repo');
  mkdirSync(path.join(repo, '.saga'), { recursive: true });
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'fleet-sample', private: true }, null, 2),
    'README.md': '# Fleet sample\n',
    '.saga/demo-script.json': JSON.stringify(options.script, null, 2),
    'saga.config.yaml': `default_agent: demo\nattempts: 3\n${options.config ?? ''}`,
    ...options.files,
  };
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), content);
  }
  if (options.config) writeFileSync(userConfigBeside(repo), files['saga.config.yaml']!);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'Fleet sample');
  const planFile = path.join(dir, 'plan.yaml');
  writeFileSync(planFile, YAML.stringify(options.plan));
  return { repo, planFile };
}

/** The user's own config file createFleetRepo writes beside the repo (when it was given `config`). */
export const userConfigBeside = (repo: string): string => path.join(path.dirname(repo), 'saga.config.yaml');

/** A plan task with the fields the schema wants; `check` doubles as its one validation command. */
export function planTask(
  id: number,
  slug: string,
  owns: string[],
  check: string,
  dependsOn: string[] = [],
): Record<string, unknown> {
  return {
    id,
    slug,
    title: `Task ${slug}`,
    depends_on: dependsOn,
    scope: `Write ${owns.join(', ')}.`,
    owns,
    interfaces: 'none',
    validation_method: 'command',
    validation: [{ text: `${slug} check`, check }],
    evidence: 'check output',
  };
}

/**
 * A plan of one milestone whose one task writes `work.txt` (and the `attempts.json` a rogue agent records its
 * tries in), `check` validating the task, the milestone and the saga.
 */
export function oneFilePlan(name: string, check: string): Record<string, unknown> {
  return {
    name,
    problem: 'One file.',
    scope: { in: ['work.txt'], out: [], delegated: [] },
    exit_criteria: [{ id: 'E1', text: 'work.txt', check }],
    milestones: [
      {
        id: 1,
        slug: 'one',
        title: 'One',
        depends_on: [],
        goal: 'work.txt',
        validation: [{ text: 'work.txt', check }],
        tasks: [planTask(1, 'work', ['work.txt', 'attempts.json'], check)],
      },
    ],
  };
}

/** The saga has stopped to ask its user (acceptance or an escalation), or ended. */
export const waitsForUserOrEnded = (s: SagaStatus): boolean =>
  s.phase === 'failed' ||
  s.phase === 'complete' ||
  s.pending.some((p) => p.kind === 'acceptance' || p.kind === 'escalation');

/** Starts the saga, confirms its name and approves the plan; returns its input. */
export async function startApprovedSaga(
  env: SagaTestEnv,
  request: { repo: string; planFile: string; name: string; args: string; agent?: string; config?: string },
): Promise<SagaInput> {
  process.env.SAGA_HOME = env.sagaHome;
  process.env.SAGA_HOST_ID = env.hostId;
  process.env.SAGA_TASK_QUEUE = env.taskQueue;
  const input = await prepareSaga({
    repo: request.repo,
    argumentsText: request.args,
    plan: request.planFile,
    name: request.name,
    ...(request.agent ? { agent: request.agent } : {}),
    ...(request.config
      ? { config: request.config }
      : existsSync(userConfigBeside(request.repo))
        ? { config: userConfigBeside(request.repo) }
        : {}),
  });
  await startSaga(env.client, input);
  await waitForPending(env, input.name, 'confirm-name');
  await respond(env.client, input.name, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
  await waitForPending(env, input.name, 'plan-approval-1', 60_000);
  await respond(env.client, input.name, {
    interactionId: 'plan-approval-1',
    choice: 'approve',
    user: 'test',
  });
  return input;
}

/** Every run of every workflow of the saga (the saga, its phases, tasks, continued runs). */
export async function sagaRuns(env: SagaTestEnv, name: string): Promise<WorkflowExecutionInfo[]> {
  const runs: WorkflowExecutionInfo[] = [];
  for await (const run of env.client.workflow.list({ query: `WorkflowId STARTS_WITH 'saga-${name}'` })) {
    runs.push(run);
  }
  return runs;
}

/** Saga worktrees git still knows about (the main checkout excluded). */
export const sagaWorktrees = (repo: string, name: string): string[] =>
  git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('branch ') && l.includes(`refs/heads/saga/${name}/`));

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The events of a workflow and, recursively, of every child it started (by workflow id). */
export async function sagaHistories(
  client: Client,
  workflowId: string,
): Promise<Map<string, HistoryEvent[]>> {
  const all = new Map<string, HistoryEvent[]>();
  const visit = async (id: string) => {
    const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
    all.set(id, events);
    for (const e of events) {
      const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
      if (child && !all.has(child)) await visit(child);
    }
  };
  await visit(workflowId);
  return all;
}
