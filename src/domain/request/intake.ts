/**
 * Intake (docs/PROCEDURE.md §1.3). Before anything runs, the name confirmation shows the request as
 * given, the saga's rough shape and the unknowns visible in the request (derived from the input alone: nothing
 * is read or created before the user confirms). The restatement proper comes from the planner, which has read
 * the repository: its first questions run returns it and the user sees it with the first question.
 */
import type { FlagsResult } from '../contract/flags-result';
import type { Plan } from '../plan';

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
  /** What runs unconfined (`sandbox: none`); absent or empty when everything is confined. */
  unconfined?: readonly string[];
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

  // Only what the request itself leaves open: the planner, once it has read the repository, names the rest.
  const unknowns: string[] = [];
  if (!goal && !req.plan) unknowns.push('What to build: no goal was given.');
  else if (!req.plan && goal.split(/\s+/).length < TERSE_GOAL_WORDS)
    unknowns.push(`What "${goal}" covers and what it leaves out: the goal is terse.`);
  const alternatives = / or /i.exec(goal) ? goal : null;
  if (alternatives) unknowns.push(`Which of the alternatives in "${alternatives}" is wanted.`);
  if (req.plan)
    unknowns.push(
      "Whether the plan's checks run in this repository as written: discovery shows the commands.",
    );
  return { problem, shape, unknowns };
}

/** The prompt of the `confirm-name` interaction: what will be created, the restatement and the unknowns. */
export function confirmNamePrompt(req: IntakeRequest): string {
  const brief = intakeBrief(req);
  const unconfined = req.unconfined ?? [];
  return [
    ...(unconfined.length
      ? [
          `WARNING: UNCONFINED: ${unconfined.join('; ')} run${unconfined.length > 1 ? '' : 's'} without the ` +
            "sandbox, with your user's full access to this machine, its files and its network.",
        ]
      : []),
    `Create saga '${req.name}' in ${req.sagaDir} for: ${req.goal.trim() || '(no goal given)'}?`,
    `${req.plan ? 'Problem' : 'Request'}: ${brief.problem}`,
    `Rough shape: ${brief.shape}`,
    'Unknowns in the request itself:',
    ...(brief.unknowns.length
      ? brief.unknowns.map((u) => `- ${u}`)
      : ['- None stand out; the planner names the major unknowns once it has read the repository.']),
    ...(req.plan
      ? []
      : [
          'Once you confirm, the planner restates the request (problem, rough shape, major unknowns) from the ' +
            'repository; it comes with its first questions and is recorded in decisions.md.',
        ]),
    'Nothing is created before you confirm. To use another name, cancel and start again with --name.',
  ].join('\n');
}

/** The planner's intake restatement (questions stage, round 1) as lines; null when it gave no problem. */
export function plannerRestatement(out: {
  problem: string;
  shape: string;
  unknowns: string[];
}): string[] | null {
  const problem = out.problem.trim();
  if (!problem) return null;
  const unknowns = out.unknowns.map((u) => u.trim()).filter(Boolean);
  return [
    `Problem: ${problem.replace(/\s+/g, ' ')}`,
    ...(out.shape.trim() ? [`Rough shape: ${out.shape.trim().replace(/\s+/g, ' ')}`] : []),
    ...(unknowns.length ? ['Major unknowns:', ...unknowns.map((u) => `- ${u}`)] : []),
  ];
}

/** The first question after intake carries the restatement, so the user reads it before answering. */
export const withRestatement = (prompt: string, restatement: string[]): string =>
  ["The planner's restatement of your request:", ...restatement, '', prompt].join('\n');
