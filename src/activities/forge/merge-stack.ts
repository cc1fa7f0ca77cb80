/**
 * Merging a saga's pull requests down the stack through the forge's merge API (so branch protection and
 * required checks hold): bottom first, each PR retargeted to the base branch once the one below it merged
 * (stack.ts mergeSteps). A PR merged already (a retry, a person) is skipped; a closed one, one whose head
 * moved since the user saw it, or one the forge refuses stops the merge with the reason, returned, not
 * thrown: the workflow shows it to the user.
 */
import type { z } from 'zod';
import { mergeSteps } from '../../domain/delivery/stack';
import type { MergePullRequestsResult } from './delivery-activities';
import type { MergeInputSchema } from './delivery-inputs';
import type { Forge, PullRequest } from './port';

type MergeInput = z.output<typeof MergeInputSchema>;

/** Why `pull` may not be merged as the user saw it, or null. */
function notAsSeen(pull: PullRequest, expectedHeadSha: string): string | null {
  if (pull.state === 'closed') return `pull request #${pull.number} was closed without being merged`;
  if (pull.headSha !== expectedHeadSha) {
    return (
      `pull request #${pull.number}'s head moved from ${expectedHeadSha.slice(0, 12)} to ` +
      `${pull.headSha.slice(0, 12)} since it was shown: look at it again before merging`
    );
  }
  return null;
}

export async function mergeStack(forge: Forge, input: MergeInput): Promise<MergePullRequestsResult> {
  const merged: number[] = [];
  const current = new Map<number, PullRequest>();
  const expected = new Map(input.prs.map((pr) => [pr.number, pr.headSha]));
  for (const step of mergeSteps(input.prs, input.baseBranch)) {
    const number = 'merge' in step ? step.merge : step.retarget;
    const pull = current.get(number) ?? (await forge.pullRequest(number));
    current.set(number, pull);
    if (pull.state === 'merged') {
      if ('merge' in step) merged.push(number);
      continue;
    }
    const refusal = notAsSeen(pull, expected.get(number)!);
    if (refusal) return { merged, refused: { number, message: refusal } };
    if ('retarget' in step) {
      // A retry finds it retargeted already.
      if (pull.base !== step.to)
        current.set(number, await forge.updatePullRequest(number, { base: step.to }));
      continue;
    }
    const answer = await forge.merge(number, input.method, pull.headSha);
    if (!answer.merged) return { merged, refused: { number, message: answer.message } };
    merged.push(number);
  }
  return { merged, refused: null };
}
