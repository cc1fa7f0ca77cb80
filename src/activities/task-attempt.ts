/**
 * One attempt of a worker task as one activity: (on the first attempt) the worktree with its dependency
 * merges, the implementer agent, the task's checks, and — when the workflow says this outcome ends the
 * task — the durable handoff (commit, then remove the worktree). Each workflow-task round trip costs tens
 * of milliseconds, so a task that passes first time pays for one activity instead of four.
 *
 * A retry after a worker crash resumes instead of starting over: the prepared worktree and a finished
 * agent run are checkpointed in the attempt's run folder, keyed by the activity's own identity, so a
 * crash during the checks or the handoff never runs (and pays for) the agent again.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { agentSucceeded } from '../domain/agents/agent-output';
import { conflictNote } from '../domain/fleet/task-notes';
import { isSagaBranch } from '../domain/contract/naming';
import type { RunAgentResult } from './agents';
import { runDirectory } from './process/process';
import type { createRoleAgentActivities, RoleAgentInput } from './agents/roles';
import { runGit, type createTaskGitActivities, type HandoffSettings } from './git';
import type { createValidationActivities, RunChecksInput, RunChecksResult } from './validation';

type TaskGit = ReturnType<typeof createTaskGitActivities>;
type RoleAgents = ReturnType<typeof createRoleAgentActivities>;
type Validation = ReturnType<typeof createValidationActivities>;
export type PreparedTask = Awaited<ReturnType<TaskGit['prepareTaskWorktree']>>;
export type TaskHandoff = Awaited<ReturnType<TaskGit['handoffTask']>>;

export interface TaskAttemptInput {
  /** First attempt of this task run: create (or reuse) the worktree and merge the dependencies in. */
  prepare?: Parameters<TaskGit['prepareTaskWorktree']>[0];
  agent: RoleAgentInput;
  checks: Omit<RunChecksInput, 'cwd'>;
  handoff: {
    repo: string;
    /** Start of the task's own changes; from `prepare` when it runs. */
    baseCommit?: string;
    /**
     * The task branch the handoff commits on, whatever the agent checked out. Absent in inputs recorded
     * before it was added: then `prepare`'s branch, or the worktree's own branch when it is a saga branch.
     */
    branch?: string;
    /** `worktree.copy` entries: never committed. */
    excludePaths?: string[];
    settings?: HandoffSettings;
    /** Commit message when the checks pass; null: the workflow still needs the worktree (review). */
    onPass: string | null;
    /** Commit message when the attempt fails; null: another attempt follows. */
    onFail: string | null;
  };
}

export interface TaskAttemptResult {
  prepared: PreparedTask | null;
  run: RunAgentResult;
  /** Null when the agent itself failed (the checks did not run). */
  checks: RunChecksResult | null;
  passed: boolean;
  /** Set when this attempt handed the task off. */
  handoff: TaskHandoff | null;
}

interface Checkpoint {
  activity: string;
  prepared?: PreparedTask;
  run?: RunAgentResult;
}

export function createTaskAttemptActivities(deps: {
  taskGit: TaskGit;
  roleAgents: RoleAgents;
  validation: Validation;
}) {
  return {
    async runTaskAttempt(input: TaskAttemptInput): Promise<TaskAttemptResult> {
      const info = Context.current().info;
      const activity = `${info.workflowExecution?.runId ?? '-'}/${info.activityId}`;
      const checkpointPath = path.join(
        runDirectory(input.agent.sagaDir, input.agent.runLabel),
        'attempt-checkpoint.json',
      );
      const saved = await readCheckpoint(checkpointPath, activity);
      const worktree = input.agent.workdir;
      const worktreeThere = await fs.stat(worktree).then(
        () => true,
        () => false,
      );
      const resume = worktreeThere ? saved : { activity };

      let prepared = resume.prepared ?? null;
      if (input.prepare && !prepared) {
        prepared = await deps.taskGit.prepareTaskWorktree(input.prepare);
        await writeCheckpoint(checkpointPath, { activity, prepared });
      }
      let run = resume.run;
      if (!run) {
        const notes = [
          ...((input.agent.context?.notes as string[] | undefined) ?? []),
          ...(prepared?.conflicts.map(conflictNote) ?? []),
        ];
        run = await deps.roleAgents.runRoleAgent({
          ...input.agent,
          context: { ...input.agent.context, notes },
        });
        await writeCheckpoint(checkpointPath, { activity, prepared: prepared ?? undefined, run });
      }
      const agentOk = agentSucceeded(run);
      const checks = agentOk ? await deps.validation.runChecks({ ...input.checks, cwd: worktree }) : null;
      const passed = checks?.passed ?? false;
      const message = passed ? input.handoff.onPass : input.handoff.onFail;
      const handoff =
        message === null
          ? null
          : await deps.taskGit.handoffTask({
              repo: input.handoff.repo,
              worktree,
              message,
              baseCommit: prepared?.startCommit ?? input.handoff.baseCommit,
              branch: await taskBranch(input, prepared),
              excludePaths: input.handoff.excludePaths ?? input.prepare?.copyFiles ?? [],
              settings: input.handoff.settings,
            });
      return { prepared, run, checks, passed, handoff };
    },
  };
}

/**
 * The branch the handoff must commit on. Inputs recorded before the workflow named it fall back to the
 * prepared branch, then to the worktree's own branch when that is a saga branch (what was committed on then).
 */
async function taskBranch(input: TaskAttemptInput, prepared: PreparedTask | null): Promise<string> {
  const known = input.handoff.branch ?? input.prepare?.branch ?? prepared?.branch;
  if (known) return known;
  const head = await runGit(input.agent.workdir, ['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(
    () => '',
  );
  if (isSagaBranch(head.trim())) return head.trim();
  throw ApplicationFailure.nonRetryable(
    `The handoff of '${input.agent.workdir}' does not know its task branch, and the worktree is not on a ` +
      `saga branch (${head.trim() || 'detached HEAD'}); nothing committed`,
    'WorktreeConflict',
  );
}

async function readCheckpoint(file: string, activity: string): Promise<Checkpoint> {
  const text = await fs.readFile(file, 'utf8').catch(() => null);
  if (text === null) return { activity };
  try {
    const saved = JSON.parse(text) as Checkpoint;
    // Another activity's checkpoint (an earlier saga run reusing this label) says nothing about this one.
    return saved.activity === activity ? saved : { activity };
  } catch {
    return { activity }; // torn write during a crash: start the attempt over
  }
}

/** Written atomically (temp file + rename), so a crash never leaves half a checkpoint behind. */
async function writeCheckpoint(file: string, checkpoint: Checkpoint): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temp, JSON.stringify(checkpoint));
  await fs.rename(temp, file);
}
