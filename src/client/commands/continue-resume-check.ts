/**
 * `saga continue` reconciles a stopped saga BEFORE its new run starts: git and the evidence are compared
 * with the state the run will resume from, a lost merge (a task recorded as integrated whose commit the
 * integration branch does not contain) is merged again or left, as the user answers, and what was found
 * starts the new run as its reconciliation (its log, PROGRESS.md, `saga status`, the acceptance prompt
 * and REPORT.md show it). A run still going whose worker is gone is checked the same way before a worker
 * starts it again.
 */
import os from 'node:os';
import { createInterface } from 'node:readline/promises';
import { redoMerge, reconcileGit } from '../../activities/git-ops';
import type { Client } from '@temporalio/client';
import {
  gitExpectations,
  reconciliationInput,
  reconciliationLogLines,
  reconciliationSummary,
  taskFinding,
} from '../../domain/record/reconciliation';
import type {
  Reconciliation,
  ReconciliationFinding,
  ReconciliationInput,
} from '../../domain/contract/reconciliation';
import { addedMilestones } from '../../domain/fleet/fleet-run';
import { integrationBranch } from '../../domain/contract/naming';
import type { SagaInput } from '../../domain/saga/saga-input';
import { SAGA_LOG_KEEP, type SagaState } from '../../domain/saga/saga-state';
import type { MilestoneState, TaskState } from '../../domain/contract/state';
import { stripControls } from '../../domain/text/terminal';
import { withMilestoneRecords } from '../../status/milestone-records';
import { UserError } from '../errors';
import { evidenceFindings } from './continue-reconcile';
import { stateFromHistory, type History } from './continue-history';
import type { Terminal } from './continue-locate';
import type { Io } from '../io';

export type LostMergeChoice = 'redo' | 'leave';

/** The `--lost-merges` value, checked; undefined when not given. */
export function lostMergeChoice(raw: string | undefined): LostMergeChoice | undefined {
  if (raw === undefined || raw === 'redo' || raw === 'leave') return raw;
  throw new UserError(`--lost-merges must be 'redo' or 'leave', got '${raw}'.`);
}

interface LostMerge {
  task: TaskState;
  commit: string;
}

const who = (): string => `cli:${process.env.USER ?? os.userInfo().username}`;

/** One answer per lost merge: the flag's, else asked at a terminal; without either nothing is resumed. */
async function choices(
  lost: LostMerge[],
  name: string,
  flag: LostMergeChoice | undefined,
  terminal: Terminal,
): Promise<LostMergeChoice[]> {
  if (!lost.length || flag) return lost.map(() => flag!);
  const listed = lost.map((l) => `  - task ${l.task.id} (${l.task.title}), commit ${l.commit.slice(0, 12)}`);
  if (!terminal.input.isTTY)
    throw new UserError(
      [
        `Saga '${name}': the integration branch lost the merge of ${lost.length} task(s) the record says are integrated:`,
        ...listed,
        `Say what to do: saga continue ${name} --lost-merges=redo (merge them again) or ` +
          `--lost-merges=leave (resume without them; the acceptance prompt and REPORT.md say so). Nothing was changed.`,
      ].join('\n'),
    );
  const rl = createInterface({ input: terminal.input, output: terminal.output, terminal: true });
  const closing = new AbortController();
  rl.on('SIGINT', () => rl.close());
  rl.on('close', () => closing.abort());
  try {
    const answers: LostMergeChoice[] = [];
    for (const l of lost) {
      let answer: string | undefined;
      while (answer !== 'redo' && answer !== 'leave') {
        if (closing.signal.aborted)
          throw new UserError(`No answer about task ${l.task.id}'s lost merge; nothing was resumed.`);
        answer = (
          await rl
            .question(
              `Task ${l.task.id} (${stripControls(l.task.title)}) is recorded as integrated, but its commit ` +
                `${l.commit.slice(0, 12)} is not in the integration branch. Redo the merge or leave it? (redo/leave): `,
              { signal: closing.signal },
            )
            .catch(() => undefined)
        )?.trim();
      }
      answers.push(answer);
    }
    return answers;
  } finally {
    rl.close();
  }
}

/** The lost merge done again (or left), said in its finding. */
async function settle(
  l: LostMerge,
  choice: LostMergeChoice,
  input: SagaInput,
  branch: string,
  user: string,
): Promise<string> {
  if (choice === 'leave') return `; left as is by ${user} at saga continue`;
  const result = await redoMerge({
    repo: input.repo,
    sagaName: input.name,
    integrationBranch: branch,
    commit: l.commit,
    message: `saga(${input.name}): integrate ${l.task.id} ${l.task.slug} (merge redone at saga continue)`,
  });
  return result.status === 'conflict'
    ? `; ${user} asked to redo the merge, which conflicted in ${result.conflictedFiles.join(', ')}: aborted, left as is`
    : `; merge redone by ${user} at saga continue ('${branch}' now at ${result.head.slice(0, 12)})`;
}

/**
 * Git and the evidence compared with `milestones` (their task states, records put back), a lost merge
 * redone or left as the user answers; what was found, printed.
 */
async function reconcileRecord(
  milestones: MilestoneState[],
  input: SagaInput,
  io: Io,
  terminal: Terminal,
  flag: LostMergeChoice | undefined,
): Promise<Reconciliation> {
  const branch = integrationBranch(input.name);
  const expected = gitExpectations(milestones);
  const git = await reconcileGit({
    repo: input.repo,
    sagaName: input.name,
    tasks: expected,
    integrationBranch: branch,
  });
  const tasks = milestones.flatMap((m) => m.tasks);
  const lost: LostMerge[] = git.tasks.flatMap((t) => {
    const task = tasks.find((x) => x.key === t.key);
    const lostMerge =
      task?.status === 'integrated' && task.commit && t.commitExists && !t.mergedIntoIntegration;
    return lostMerge ? [{ task, commit: task.commit! }] : [];
  });
  const answers = await choices(lost, input.name, flag, terminal);
  const user = who();
  const findings: ReconciliationFinding[] = [];
  for (const f of git.findings) {
    const finding = taskFinding(milestones, f);
    const i = lost.findIndex((l) => l.task.key === f.key);
    const merge = i >= 0 && f.text.startsWith('recorded as integrated but not merged');
    const outcome = merge ? await settle(lost[i]!, answers[i]!, input, branch, user) : '';
    findings.push({ ...finding, text: `${finding.text}${outcome}`.slice(0, 500) });
  }
  const evidence = await evidenceFindings({ sagaDir: input.sagaDir, milestones });
  const found = reconciliationInput([...findings, ...evidence.findings], {
    tasks: git.tasks.length,
    evidenceFiles: evidence.checked,
  });
  const at = new Date().toISOString();
  const summary = reconciliationSummary({ ...found, at });
  io.out(
    stripControls(
      [`Reconciliation: ${summary.heading}`, ...summary.findings.map((f) => `  - ${f}`)].join('\n'),
    ),
  );
  return { ...found, at };
}

/** The state the new run starts from, with what reconciliation found (and did) before it resumes. */
export async function reconcileBeforeResume(
  carry: SagaState,
  input: SagaInput,
  io: Io,
  terminal: Terminal,
  flag: LostMergeChoice | undefined,
): Promise<SagaState> {
  const { milestones } = await withMilestoneRecords({ sagaDir: input.sagaDir, milestones: carry.milestones });
  const found = await reconcileRecord(milestones, input, io, terminal, flag);
  const logged = reconciliationLogLines(found).map((line) => `${found.at} ${line}`);
  return {
    ...carry,
    reconciliation: found,
    log: [...logged.reverse(), ...carry.log].slice(0, SAGA_LOG_KEEP),
  };
}

/**
 * A run still going on the server whose worker is gone (killed, the laptop closed) is reconciled before a
 * worker picks it up again, from what needs no worker: the state the run started from, the progress its
 * history shows and the record files of the milestones integrated since. Null before a plan was approved.
 * The run keeps its input: what was found goes to it by the `reconcile` update once a worker runs it.
 */
export async function reconcileBeforeRestart(
  client: Client,
  history: History,
  input: SagaInput,
  io: Io,
  terminal: Terminal,
  flag: LostMergeChoice | undefined,
): Promise<ReconciliationInput | null> {
  const start = await stateFromHistory(client, input.name, history, { openPhase: false });
  if (!start) return null;
  // The run's implementation phase starts the plan's milestones it does not carry yet.
  const planned = addedMilestones(input.name, start.plan, start.milestones);
  const recorded = { sagaDir: input.sagaDir, milestones: [...start.milestones, ...planned] };
  const { milestones } = await withMilestoneRecords(recorded, { unmarked: true });
  const { at: _at, ...found } = await reconcileRecord(milestones, input, io, terminal, flag);
  return found;
}
