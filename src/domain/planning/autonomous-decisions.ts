/**
 * Autonomous mode's decisions during planning, as pure functions: decisions.md entries, the rationale
 * bullets of SAGA.md, questions asked back, the user's corrections, and the repo memory they become.
 */
import {
  DECISION_TAG,
  type CorrectableDecision,
  type MemoryEntry,
  type parseDecisionCorrections,
} from './memory';
import type { PlannerDecision, PlannerQuestion } from './planner';

/** A question asked back in autonomous mode whose answer was [D]: the planner's recommendation stands. */
export interface AdoptedDefault {
  question: string;
  choice: string;
}

const DEFAULT_CITATION = 'default — no signal ([D] picked by the user)';

/** decisions.md entries: the planner's own decisions with citations, then the defaults adopted by [D]. */
export function autonomousDecisionEntries(
  decided: PlannerDecision[],
  defaults: AdoptedDefault[],
  at: string,
): { at: string; title: string; lines: string[] }[] {
  return [
    ...(decided.length
      ? [
          {
            at,
            title: `Autonomous decisions (planning): ${decided.length} decided`,
            lines: decided.map(
              (d) =>
                `- ${d.question}: ${d.choice} — ${d.citation}${d.confident ? '' : ' (unconfident, cosmetic: default documented)'}`,
            ),
          },
        ]
      : []),
    ...(defaults.length
      ? [
          {
            at,
            title: `Defaults adopted ([D]) for ${defaults.length} question(s) asked back`,
            lines: defaults.map(
              (d) => `- ${d.question}: ${d.choice} — default — no signal; the user picked [D]`,
            ),
          },
        ]
      : []),
  ];
}

/** Decisions the user may correct by number at plan approval (D1, D2, ...). */
export const correctableDecisions = (
  decisions: PlannerDecision[],
  defaults: AdoptedDefault[],
): CorrectableDecision[] => [
  ...decisions.map(({ question, choice, citation }) => ({ question, choice, citation })),
  ...defaults.map(({ question, choice }) => ({ question, choice, citation: DEFAULT_CITATION })),
];

/** An unconfident, substantive decision is the user's to answer (autonomous mode: never auto-picked). */
export const askedBackQuestion = (d: PlannerDecision, n: number, autonomous: boolean): PlannerQuestion => ({
  id: `d${n}`,
  text: d.question,
  options: [d.choice, 'Something else (say which with --text)'],
  recommended: 0,
  substantive: true,
  why: autonomous
    ? `--autonomous could not decide this confidently (${d.citation}); it is substantive, so ` +
      `it is yours to answer. [D] default adopts "${d.choice}" and records it in decisions.md.`
    : `no signal to decide this (${d.citation}); it is substantive, so it is yours to answer.`,
});

/** Autonomous mode's rationale bullets: `**label:** choice — citation`, the [D] defaults marked as such. */
export function rationaleBullets(decisions: PlannerDecision[], defaults: AdoptedDefault[]): string[] {
  return [
    ...decisions.map((d) => `**${d.question}:** ${d.choice} — ${d.citation}`),
    ...defaults.map((d) => `**${d.question}:** ${d.choice} — ${DEFAULT_CITATION}`),
  ];
}

/** A corrected decision stands as the user said (the rationale block and later approvals show it so). */
export function applyCorrections(
  corrections: ReturnType<typeof parseDecisionCorrections>['corrections'],
  decisions: PlannerDecision[],
  defaults: AdoptedDefault[],
): void {
  for (const c of corrections) {
    const i = c.number - 1;
    const citation = `the user's correction (D${c.number}, [LRN:correction] in decisions.md)`;
    if (i < decisions.length)
      decisions[i] = { ...decisions[i]!, choice: c.correction, citation, confident: true };
    else if (defaults[i - decisions.length]) defaults[i - decisions.length]!.choice = c.correction;
  }
}

/** This saga's planning decisions as memory entries: the planner's own (with citations) and the user's answers. */
export function memoryEntries(
  saga: string,
  decisions: PlannerDecision[],
  answers: { question: string; answer: string; text?: string }[],
  defaults: AdoptedDefault[],
  at: string,
): MemoryEntry[] {
  const adopted = new Set(defaults.map((d) => d.question));
  const entry = (subject: string, text: string): MemoryEntry => ({
    at,
    tag: DECISION_TAG,
    subject,
    text,
    saga,
    file: 'decisions.md',
  });
  return [
    ...decisions.map((d) => entry(d.question, `${d.choice} — decided autonomously (${d.citation})`)),
    ...answers.map((a) =>
      entry(
        a.question,
        `${a.answer}${a.text ? ` (${a.text})` : ''} — ${adopted.has(a.question) ? 'default adopted by the user ([D])' : 'answered by the user'}`,
      ),
    ),
  ];
}

export function countSources(decisions: PlannerDecision[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const d of decisions) {
    const key = /memory/i.test(d.citation)
      ? 'memory'
      : /codebase|pattern/i.test(d.citation)
        ? 'codebase'
        : /principle|constitution/i.test(d.citation)
          ? 'principle'
          : /prior|decision/i.test(d.citation)
            ? 'prior'
            : 'default';
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
