/**
 * The workpad comment's text (docs/PROCEDURE.md §14): the saga's phase, the restatement, the exit criteria as
 * a checklist, the milestones and tasks in one compact table, the pull requests, the cost and the Web UI
 * link. Plain Markdown that reads the same on GitHub, Gitea and Linear. Much of it is agent-written (the
 * planner's restatement, titles) and reaches people who watch the issue, so it is made safe first.
 * Also the line of a PR body that closes the issue when the PR is merged.
 */
import type { ForgeTarget } from '../delivery/forge-shapes';
import { oneTerminalLine, stripControls } from '../text/terminal';
import type { IntakeSource } from './issue';
import { trackerRefText } from './tracker-ref';
import { WORKPAD_MARKER, type Workpad } from './workpad';

/** The restatement's longest form: a workpad is a summary, the saga directory has the rest. */
const PROBLEM_CAP = 1_500;
/** A table cell's or list item's longest form. */
const CELL_CAP = 200;

/**
 * Agent or tracker text made inert for Markdown: no controls; `<` escaped (an HTML comment would hide the
 * rest, or fake the workpad's marker); `@` kept from mentioning anyone (a zero-width space after it), so
 * text an agent wrote cannot notify people or teams.
 */
function inert(text: string): string {
  return stripControls(text)
    .replace(/</g, '&lt;')
    .replace(/@(?=[\w-])/g, '@\u200b');
}

/** One line for a table cell or list item: pipes escaped so a cell cannot split the table. */
function cell(text: string, cap = CELL_CAP): string {
  const line = oneTerminalLine(inert(text)).replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
  return line.length > cap ? `${line.slice(0, cap - 1)}…` : line;
}

const PHASE_WORDS: Record<Workpad['phase'], string> = {
  planning: 'planning',
  implementation: 'implementing',
  review: 'in review',
  done: 'done',
  cancelled: 'cancelled',
};

const CHECKED = new Set(['passed', 'verified-by-user']);

function criteriaLines(workpad: Workpad): string[] {
  if (workpad.exitCriteria.length === 0) return [];
  return [
    '',
    '**Exit criteria**',
    '',
    ...workpad.exitCriteria.map((c) => {
      const mark = c.result && CHECKED.has(c.result) ? 'x' : ' ';
      return `- [${mark}] ${cell(c.id, 20)}: ${cell(c.text)} (${c.result ? cell(c.result, 40) : 'not checked yet'})`;
    }),
  ];
}

function milestoneLines(workpad: Workpad): string[] {
  if (workpad.milestones.length === 0) return [];
  const rows = workpad.milestones.flatMap((m) => [
    `| **${m.id}** | **${cell(m.title)}** | ${cell(m.status, 40)} | |`,
    ...m.tasks.map(
      (t) => `| ${cell(t.key, 20)} | ${cell(t.title)} | ${cell(t.status, 40)} | ${cell(t.agent ?? '', 40)} |`,
    ),
  ]);
  return ['', '**Milestones**', '', '| | | state | agent |', '| --- | --- | --- | --- |', ...rows];
}

function pullRequestLines(workpad: Workpad): string[] {
  if (workpad.pullRequests.length === 0) return [];
  const links = workpad.pullRequests.map((pr) => {
    const of = pr.milestone === null ? '' : `milestone ${pr.milestone}, `;
    return `[#${pr.number}](${safeUrl(pr.url)}) (${of}${cell(pr.state, 20)})`;
  });
  return ['', `**Pull requests:** ${links.join(' · ')}`];
}

/** A link target: http(s) only, no spaces or parentheses that would end the Markdown link early. */
function safeUrl(url: string): string {
  const line = oneTerminalLine(url).trim();
  return /^https?:\/\/[^\s()<>]+$/.test(line) ? line : '#';
}

/** The workpad comment's body; it starts with WORKPAD_MARKER, by which the saga finds it again. */
export function renderWorkpad(workpad: Workpad, source: IntakeSource): string {
  const head = `### Saga \`${cell(workpad.sagaName, 63).replace(/`/g, '')}\`: ${PHASE_WORDS[workpad.phase]}`;
  const problem = workpad.problem ? cell(workpad.problem, PROBLEM_CAP) : null;
  const footer = [
    `Phase: \`saga:${workpad.phase}\``,
    `cost so far $${workpad.costUsd.toFixed(2)}`,
    workpad.uiUrl ? `[Web UI](${safeUrl(workpad.uiUrl)})` : null,
  ].filter((part): part is string => part !== null);
  return [
    WORKPAD_MARKER,
    head,
    '',
    `Working on ${cell(trackerRefText(source.ref))}: ${cell(source.title)}. This comment is kept up to date by the saga at each phase.`,
    ...(problem ? ['', `**Restatement:** ${problem}`] : []),
    ...criteriaLines(workpad),
    ...milestoneLines(workpad),
    ...pullRequestLines(workpad),
    '',
    footer.join(' · '),
  ].join('\n');
}

/**
 * The PR body's line that closes the issue when the PR is merged: `Closes #N` in the issue's own repository,
 * `Closes OWNER/REPO#N` in another of the same forge, `Fixes TEAM-N` for Linear (its GitHub and GitLab
 * integrations read it). An issue on another kind of forge than the PR's (or no forge) cannot be closed
 * from the PR: the line links it instead.
 */
export function closingReference(source: IntakeSource, forge: ForgeTarget | null): string {
  const { ref } = source;
  if (ref.kind === 'linear') return `Fixes ${ref.team}-${ref.number}`;
  if (!forge || forge.kind !== ref.kind) return `Issue: ${trackerRefText(ref)} (${safeUrl(source.url)})`;
  const same =
    forge.owner.toLowerCase() === ref.owner.toLowerCase() &&
    forge.repo.toLowerCase() === ref.repo.toLowerCase();
  return same ? `Closes #${ref.number}` : `Closes ${ref.owner}/${ref.repo}#${ref.number}`;
}

/**
 * The PR body's closing line (`closingReference`) for the PR that lands the whole saga: the one PR of
 * `pr: single`, or the top of the stack (`landsAll`). Each stacked PR merges into the base branch in turn,
 * so the line on a lower one would close the issue with only part of the work merged. Null without an issue.
 */
export function prClosingLine(
  source: IntakeSource | undefined,
  forge: ForgeTarget | undefined,
  landsAll: boolean,
): string | null {
  return source && landsAll ? closingReference(source, forge ?? null) : null;
}
