/**
 * Intake (Saga procedure, Phase 1 step 1): the request restated as a problem statement, the rough shape of
 * the feature and its major unknowns, shown in the name confirmation. Pure and derived from what the saga
 * was started with only: nothing is read or created before the user confirms.
 */
import type { FlagsResult } from './flags';
import type { Plan } from './plan';

export interface IntakeRequest {
  name: string;
  sagaDir: string;
  goal: string;
  repo: string;
  base: string;
  flags: FlagsResult;
  /** From `--plan`: the decomposition is already given. */
  plan: Plan | null;
  planSource: string | null;
  agent: string | null;
}

export interface IntakeBrief {
  /** One paragraph. */
  problem: string;
  /** The rough shape of the feature and of the saga that delivers it. */
  shape: string;
  unknowns: string[];
}

/** Fewer words than this and the goal alone cannot say what "done" is. */
const TERSE_GOAL_WORDS = 5;

const sentence = (text: string): string => {
  const t = text.trim().replace(/\s+/g, ' ');
  if (!t) return t;
  const capital = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
};

const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

const repoLabel = (repo: string): string => repo.split(/[\\/]/).filter(Boolean).pop() ?? repo;

export function intakeBrief(req: IntakeRequest): IntakeBrief {
  const goal = req.goal.trim();
  const where = `the repository ${repoLabel(req.repo)} (${req.repo}), on top of ${req.base}`;
  const problem = req.plan
    ? `${sentence(req.plan.problem)} To be built in ${where}, as planned in ${req.planSource ?? 'the given plan'}.`
    : goal
      ? `${sentence(goal)} To be built in ${where}.`
      : `No goal was given. The saga would run in ${where}.`;

  const lanes = req.flags.parallel
    ? `up to ${req.flags.parallel_lanes} tasks at a time`
    : 'one task at a time';
  const agent = req.agent ? `the '${req.agent}' agent` : "the configuration's default agent";
  const planning = req.plan
    ? `The plan already decomposes it: ${count(req.plan.milestones.length, 'milestone')}, ` +
      `${count(
        req.plan.milestones.reduce((n, m) => n + m.tasks.length, 0),
        'task',
      )}, ` +
      `${count(req.plan.exit_criteria.length, 'exit criterion', 'exit criteria')}; no planner is consulted.`
    : 'Planning: discovery of the repository, questions to close what is ambiguous, exit criteria, then ' +
      'milestones and tasks for your approval.';
  const shape =
    `${planning} Implementation: ${agent} works ${lanes}, each task in its own worktree and branch, ` +
    `checked against its validation${req.flags.quality_locked ? ' and reviewed until clean' : ''}; then the ` +
    'exit criteria run on the integrated result and you accept or report issues.';

  const unknowns: string[] = [];
  if (!goal && !req.plan) unknowns.push('What to build: no goal was given.');
  else if (!req.plan && goal.split(/\s+/).length < TERSE_GOAL_WORDS)
    unknowns.push(`What "${goal}" covers and what it leaves out: the goal is terse.`);
  const alternatives = / or /i.exec(goal) ? goal : null;
  if (alternatives) unknowns.push(`Which of the alternatives in "${alternatives}" is wanted.`);
  if (!req.plan)
    unknowns.push(
      'Behaviour, edge cases, error handling, data shapes and the acceptance bar: the planner asks about them.',
    );
  unknowns.push(
    "The repository's program type and its test, build and lint commands: discovered once you confirm.",
  );
  if (req.plan)
    unknowns.push(
      "Whether the plan's checks run in this repository as written: discovery shows the commands.",
    );
  if (req.flags.autonomous && !req.plan)
    unknowns.push(
      'Which decisions have no signal (memory, codebase, principle, prior decision): those are asked back to you.',
    );
  return { problem, shape, unknowns };
}

/** The prompt of the `confirm-name` interaction: what will be created, the restatement and the unknowns. */
export function confirmNamePrompt(req: IntakeRequest): string {
  const brief = intakeBrief(req);
  return [
    `Create saga '${req.name}' in ${req.sagaDir} for: ${req.goal.trim() || '(no goal given)'}?`,
    `Problem: ${brief.problem}`,
    `Rough shape: ${brief.shape}`,
    'Major unknowns:',
    ...brief.unknowns.map((u) => `- ${u}`),
    'Nothing is created before you confirm. To use another name, cancel and start again with --name.',
  ].join('\n');
}
