/**
 * What the GitHub and Gitea tracker adapters share: the token check naming the variable, the forge target
 * an issue's repository is, and the budget hook every HTTP call awaits.
 */
import type { IssueComment, IssueReply, TrackerConnection } from '../../domain/tracker/issue';
import type { TrackerRef, TrackerScope } from '../../domain/tracker/tracker-ref';
import { ForgeCallError } from '../forge/forge-error';
import type { ForgeTarget } from '../forge/port';
import { budgetKey, CALLS_PER_MINUTE, workerCallBudget, type CallBudget } from './call-budget';

/** The token's variable is set: else a refusal naming the VARIABLE (never a value), before any call. */
export function requireToken(connection: TrackerConnection, env: NodeJS.ProcessEnv): void {
  const token = env[connection.tokenEnv];
  if (!token || token.trim() === '') {
    throw new ForgeCallError(
      'token',
      null,
      `the ${connection.kind} tracker token is missing: set the environment variable ${connection.tokenEnv} (intake.${connection.kind}.token_env) for the worker`,
    );
  }
}

/** The repository of a GitHub/Gitea issue or scope as the forge HTTP clients take it. */
export function repoTarget(connection: TrackerConnection, where: TrackerRef | TrackerScope): ForgeTarget {
  if (where.kind === 'linear' || where.kind !== connection.kind) {
    throw new ForgeCallError(
      'reference',
      422,
      `a ${where.kind} reference was given to the ${connection.kind} tracker`,
    );
  }
  return {
    kind: where.kind,
    url: connection.url,
    owner: where.owner,
    repo: where.repo,
    tokenEnv: connection.tokenEnv,
  };
}

/** The hook each HTTP call awaits: one place of the token's per-minute budget. */
export const spendFrom =
  (connection: TrackerConnection, budget: CallBudget = workerCallBudget) =>
  (): Promise<void> =>
    budget.take(budgetKey(connection), CALLS_PER_MINUTE[connection.kind]);

/** The issue-number part of a GitHub/Gitea reference. */
export function issueNumber(ref: TrackerRef): number {
  if (ref.kind === 'linear') throw new ForgeCallError('reference', 422, 'a Linear issue has no repository');
  return ref.number;
}

/** A `saga:` label other than the phase's own (the issue shows one phase; other labels are left alone). */
export const isOtherSagaLabel = (name: string, wanted: string): boolean =>
  name.startsWith('saga:') && name !== wanted;

/** Each comment with whether its author may write; each author asked once per call (rights change). */
export async function withWriteAccess(
  comments: IssueComment[],
  canWrite: (login: string) => Promise<boolean>,
): Promise<IssueReply[]> {
  const rights = new Map<string, boolean>();
  const replies: IssueReply[] = [];
  for (const x of comments) {
    if (!rights.has(x.author)) rights.set(x.author, x.author !== '' && (await canWrite(x.author)));
    replies.push({ ...x, canWrite: rights.get(x.author) === true });
  }
  return replies;
}
