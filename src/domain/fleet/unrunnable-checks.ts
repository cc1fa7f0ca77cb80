/**
 * A task check that cannot run (the shell's 126/127: the command is not executable or not found). Another
 * paid attempt would meet the same missing tool, so the task stops after the attempt that found it and the
 * user decides per check at once: a check that can run, verification by hand at acceptance, or dropping it.
 * Pure, for the task and fleet workflows.
 */
import type { PlanTask } from '../plan';
import type { Answer, InteractionRequest, SpecChange } from '../contract/state';
import { UNACHIEVABLE_OPTIONS } from '../planning/unachievable';

/** Shells answer 126/127 when the command itself cannot be found or run. */
export const isNotRunnable = (exitCode: number | null, timedOut = false): boolean =>
  !timedOut && (exitCode === 126 || exitCode === 127);

export interface UnrunnableCheck {
  text: string;
  check: string;
  exitCode: number;
}

/** The checks of an attempt that could not run, in the order they ran. */
export function unrunnableChecks(
  results: readonly { text: string; check: string; exitCode: number | null; timedOut: boolean }[],
): UnrunnableCheck[] {
  return results
    .filter((r) => isNotRunnable(r.exitCode, r.timedOut))
    .map((r) => ({ text: r.text, check: r.check, exitCode: r.exitCode! }));
}

const why = (c: UnrunnableCheck): string =>
  `the command ${c.exitCode === 126 ? 'cannot be executed' : 'is not found'} (exit ${c.exitCode})`;

/** The task's reason when its attempt stopped on checks that cannot run. */
export const unrunnableReason = (checks: readonly UnrunnableCheck[]): string =>
  `check${checks.length > 1 ? 's' : ''} cannot run here: ${checks.map((c) => `\`${c.check}\` (${why(c)})`).join(', ')}`;

export const unrunnableQuestionId = (task: { key: string; delegations: number }, n: number): string =>
  `check-${task.key}-d${task.delegations}-c${n}`;

const question = (id: string, subject: string, c: UnrunnableCheck, evidence: string): InteractionRequest => ({
  id,
  kind: 'question',
  prompt:
    `${subject}: its check "${c.text}" (\`${c.check}\`) cannot run here: ${why(c)}. ` +
    `No further agent attempt runs until you answer. Answer 'new check' with a command in --text that can ` +
    `run here (exit 0 = passed; the same command again if the work is meant to create it), 'verify by ` +
    `hand' to check it yourself at acceptance, or 'drop' to remove it from the checks. Evidence: ${evidence}`,
  options: [...UNACHIEVABLE_OPTIONS],
  recommended: 0,
  textRequiredFor: ['new check'],
  textFormat: 'check-command',
});

/** One question per check that cannot run, all asked at once (no agent runs while they are open). */
export const unrunnableQuestions = (
  task: { id: string; key: string; title: string; delegations: number },
  checks: readonly UnrunnableCheck[],
  evidence: string,
): InteractionRequest[] =>
  checks.map((c, i) =>
    question(unrunnableQuestionId(task, i + 1), `Task ${task.id} (${task.title})`, c, evidence),
  );

/** The same for a milestone's validation on the merged tree (`integration`: its failed integrations so far). */
export const milestoneUnrunnableQuestions = (
  milestone: { id: number; title: string },
  round: number,
  integration: number,
  checks: readonly UnrunnableCheck[],
  evidence: string,
): InteractionRequest[] =>
  checks.map((c, i) =>
    question(
      `check-m${milestone.id}-r${round}-i${integration}-c${i + 1}`,
      `Milestone ${milestone.id} (${milestone.title}) validation`,
      c,
      evidence,
    ),
  );

/** The checks the answers leave (replaced, dropped, to verify by hand), with one phrase per change. */
export function applyUnrunnableAnswers(
  validation: readonly { text: string; check: string }[],
  checks: readonly UnrunnableCheck[],
  answers: readonly Answer[],
): {
  validation: { text: string; check: string }[];
  text: string;
  byHand: { text: string; check: string }[];
} {
  const byCheck = new Map(checks.map((c, i) => [c.check, answers[i]!]));
  const parts: string[] = [];
  const byHand: { text: string; check: string }[] = [];
  const kept = validation.flatMap((c) => {
    const answer = byCheck.get(c.check);
    if (!answer) return [c];
    if (answer.choice === 'new check') {
      const check = answer.text!.trim();
      parts.push(`check \`${c.check}\` replaced by \`${check}\``);
      return [{ text: c.text, check }];
    }
    if (answer.choice === 'drop') {
      parts.push(`check \`${c.check}\` dropped`);
      return [];
    }
    byHand.push({ text: c.text, check: c.check });
    parts.push(`check \`${c.check}\` (${c.text}) to be verified by hand at acceptance`);
    return [];
  });
  const text = `${parts.join('; ')} (the check${checks.length > 1 ? 's' : ''} could not run here)`;
  return { validation: kept, text, byHand };
}

/** The answers as a change of the task's spec (a deviation the task's spec file lists). */
export function unrunnableChange(
  spec: Pick<PlanTask, 'validation'>,
  checks: readonly UnrunnableCheck[],
  answers: readonly Answer[],
): SpecChange {
  const { validation, text, byHand } = applyUnrunnableAnswers(spec.validation, checks, answers);
  return {
    source: 'edit',
    by: [...new Set(answers.map((a) => a.user))].join(', '),
    at: answers[answers.length - 1]!.answeredAt,
    text,
    patch: { validation },
    ...(byHand.length ? { byHand } : {}),
  };
}

/** The task checks its spec changes left to verify by hand at acceptance. */
export const byHandTaskChecks = (
  changes: readonly SpecChange[] | undefined,
): { text: string; check: string }[] => (changes ?? []).flatMap((c) => c.byHand ?? []);

/** Every task check left to verify by hand, one line each (`task 1.2: "text" (\`check\`)`), for the prompt. */
export const byHandTaskCheckLines = (
  milestones: readonly { tasks: readonly { id: string; specChanges?: SpecChange[] | undefined }[] }[],
): string[] =>
  milestones.flatMap((m) =>
    m.tasks.flatMap((t) =>
      byHandTaskChecks(t.specChanges).map((c) => `task ${t.id}: "${c.text}" (${c.check})`),
    ),
  );
