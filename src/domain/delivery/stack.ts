/**
 * Which pull requests a saga proposes and how they stack: one per integrated milestone in the order they
 * were integrated (the first on the base branch, each next on the previous one's branch), or with
 * `pr: single` one of the whole integration branch. Merging goes down the stack: each PR is retargeted to
 * the base branch once the one below it has merged, so every merge lands on the base.
 */
import { deliveryBranch, integrationBranch } from '../contract/naming';

export interface StackedPr {
  /** The milestone it delivers; null for the single PR. */
  milestone: number | null;
  head: string;
  base: string;
}

/** The PRs for `integrated` milestones (ids in the order they were integrated). */
export function prStack(
  saga: { name: string; base: string },
  integrated: readonly number[],
  mode: 'stacked' | 'single',
): StackedPr[] {
  if (mode === 'single')
    return integrated.length
      ? [{ milestone: null, head: integrationBranch(saga.name), base: saga.base }]
      : [];
  return integrated.map((milestone, i) => ({
    milestone,
    head: deliveryBranch(saga.name, milestone),
    base: i === 0 ? saga.base : deliveryBranch(saga.name, integrated[i - 1]!),
  }));
}

export type MergeStep = { retarget: number; to: string } | { merge: number };

/** The forge calls that merge `prs` (bottom of the stack first), each PR's base the base branch when it merges. */
export function mergeSteps(
  prs: readonly { number: number; base: string }[],
  baseBranch: string,
): MergeStep[] {
  return prs.flatMap((pr): MergeStep[] =>
    pr.base === baseBranch
      ? [{ merge: pr.number }]
      : [{ retarget: pr.number, to: baseBranch }, { merge: pr.number }],
  );
}
