/**
 * A saga pull request's body: the goal, the exit criteria as a checklist with their results, the tasks with
 * their agents and states, the cost, the board link and `Closes …` when the saga came from an issue. It is
 * written between two markers and updated in place: text people add outside the markers stays.
 */
import type { ExitResult, MilestoneState, TaskStatus } from '../contract/state';
import type { Plan } from '../plan';
import { oneTerminalLine } from '../text/terminal';

export const PR_BODY_BEGIN =
  '<!-- saga:begin (written by the saga; what is between these markers is replaced) -->';
export const PR_BODY_END = '<!-- saga:end -->';

export interface PrBodyInput {
  saga: string;
  goal: string;
  /** The milestone the PR delivers; null for one PR of the whole integration branch (`pr: single`). */
  milestone: { id: number; title: string } | null;
  /** The PR this one is stacked on (the previous milestone's), if any. */
  stackedOn: number | null;
  exitCriteria: { id: string; text: string; result: ExitResult['result'] | null }[];
  tasks: { id: string; title: string; agent: string | null; status: TaskStatus }[];
  costUsd: number | null;
  boardUrl: string | null;
  /**
   * The line that closes the issue the saga came from when this PR merges (tracker/workpad-text.ts
   * closingReference: `Closes #12`, `Fixes ENG-42`), on the PR that lands last; else null.
   */
  closes: string | null;
}

const CHECKED: ReadonlySet<string> = new Set(['passed', 'verified-by-user']);
const RESULT_WORDS: Record<ExitResult['result'], string> = {
  passed: 'passed',
  failed: 'failed',
  'not-checkable': 'cannot be checked here',
  'by-hand': 'to verify by hand',
  'verified-by-user': 'verified by the user',
};

/** One table cell or list item of text from a plan or a person: one line, no pipes breaking the table. */
const cell = (text: string): string => oneTerminalLine(text).replace(/\|/g, '\\|').slice(0, 300);

export function renderPrBody(input: PrBodyInput): string {
  const heading = input.milestone
    ? `## Saga \`${cell(input.saga)}\`: milestone ${input.milestone.id}, ${cell(input.milestone.title)}`
    : `## Saga \`${cell(input.saga)}\``;
  const lines = [PR_BODY_BEGIN, heading, ''];
  if (input.stackedOn) lines.push(`Stacked on #${input.stackedOn}: review and merge that one first.`, '');
  lines.push(`**Goal:** ${cell(input.goal)}`, '', '### Exit criteria', '');
  for (const c of input.exitCriteria) {
    const mark = c.result && CHECKED.has(c.result) ? 'x' : ' ';
    const state = c.result ? RESULT_WORDS[c.result] : 'not checked yet';
    lines.push(`- [${mark}] ${cell(c.id)}: ${cell(c.text)} (${state})`);
  }
  lines.push('', '### Tasks', '', '| task | agent | state |', '| --- | --- | --- |');
  for (const t of input.tasks)
    lines.push(`| ${cell(t.id)} ${cell(t.title)} | ${cell(t.agent ?? '-')} | ${t.status} |`);
  const footer = [
    input.costUsd === null ? null : `Cost so far: $${input.costUsd.toFixed(2)}`,
    input.boardUrl ? `[Saga board](${input.boardUrl})` : null,
  ].filter((x): x is string => x !== null);
  if (footer.length) lines.push('', footer.join(' · '));
  if (input.closes) lines.push('', cell(input.closes));
  lines.push(PR_BODY_END);
  return lines.join('\n');
}

/** `existing` with the saga's part replaced by `rendered`; a body without the markers gets it on top. */
export function mergePrBody(existing: string, rendered: string): string {
  const begin = existing.indexOf(PR_BODY_BEGIN);
  const end = existing.indexOf(PR_BODY_END, begin);
  if (begin === -1 || end === -1) return existing.trim() ? `${rendered}\n\n${existing}` : rendered;
  return existing.slice(0, begin) + rendered + existing.slice(end + PR_BODY_END.length);
}

/** The body of a saga PR from the plan and what the saga knows now (results null before final validation). */
export function sagaPrBody(input: {
  saga: string;
  goal: string;
  plan: Pick<Plan, 'exit_criteria' | 'milestones'>;
  /** The milestone the PR delivers; null for `pr: single` (all milestones' tasks). */
  milestone: number | null;
  milestones: readonly MilestoneState[];
  exitResults: readonly Pick<ExitResult, 'id' | 'result'>[] | null;
  defaultAgent: string | null;
  stackedOn: number | null;
  costUsd: number | null;
  boardUrl: string | null;
  /** The closing line (PrBodyInput.closes); absent: none. */
  closes?: string | null;
}): string {
  const specs = input.plan.milestones.filter((m) => input.milestone === null || m.id === input.milestone);
  const tasks = specs.flatMap((m) => {
    const state = input.milestones.find((x) => x.id === m.id);
    return m.tasks.map((t) => {
      const id = `${m.id}.${t.id}`;
      // An integrated milestone's landed tasks left its state for its record file: they are integrated.
      const status =
        state?.tasks.find((x) => x.id === id)?.status ??
        (state?.status === 'integrated' ? 'integrated' : 'pending');
      return { id, title: t.title, agent: t.agent ?? input.defaultAgent, status };
    });
  });
  const title = specs.length === 1 && input.milestone !== null ? specs[0]!.title : null;
  return renderPrBody({
    saga: input.saga,
    goal: input.goal,
    milestone: title === null ? null : { id: input.milestone!, title },
    stackedOn: input.stackedOn,
    exitCriteria: input.plan.exit_criteria.map((c) => ({
      id: c.id,
      text: c.text,
      result: input.exitResults?.find((r) => r.id === c.id)?.result ?? null,
    })),
    tasks,
    costUsd: input.costUsd,
    boardUrl: input.boardUrl,
    closes: input.closes ?? null,
  });
}
