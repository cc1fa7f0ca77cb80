/**
 * A milestone's pull request, opened exactly once: the delivery branch is set to the integrated commit and
 * pushed, then the PR for that head is looked up and only created when there is none. A retried activity,
 * or `saga continue` after a crash between the push and the create, finds the PR the first try opened; the
 * saga's part of an existing PR's body is replaced in place (mergePrBody), what people wrote stays.
 */
import { isSagaBranch } from '../../domain/contract/naming';
import { mergePrBody } from '../../domain/delivery/pr-body';
import { resolveCommit } from '../git-ops/queries';
import { runGit } from '../git-ops/run';
import { ForgeCallError } from './forge-error';
import { giteaForge } from './gitea';
import { githubForge } from './github';
import type { Forge, ForgeTarget, PullRequest } from './port';
import { checkRemoteUrl, pushBranch } from './push';

export interface OpenPullRequestInput {
  /** The user's repository (the worker's git works in it). */
  repo: string;
  /** The git remote that is the forge's copy (forge.remote). */
  remote: string;
  target: ForgeTarget;
  head: string;
  headSha: string;
  base: string;
  title: string;
  /** The saga's part of the body (renderPrBody). */
  body: string;
  draft: boolean;
}

/** The adapter for `target`. */
export function forgeOf(target: ForgeTarget, env: NodeJS.ProcessEnv): Forge {
  return target.kind === 'gitea' ? giteaForge(target, env) : githubForge(target, env);
}

/** The host a forge's git remotes live on: a GitHub API's `api.github.com` is `github.com`, GHE's `/api/v3` its host. */
export function forgeGitHost(target: ForgeTarget): string {
  const api = new URL(target.url);
  return target.kind === 'github' && api.host === 'api.github.com' ? 'github.com' : api.host;
}

/** The remote's URL, refused unless it is on the forge's host (the token is for that host alone). */
export async function forgeRemoteUrl(repo: string, remote: string, target: ForgeTarget): Promise<string> {
  const url = (await runGit(repo, ['remote', 'get-url', '--end-of-options', remote])).trim();
  const parsed = checkRemoteUrl(url);
  if (parsed.host !== forgeGitHost(target)) {
    throw new ForgeCallError(
      'push',
      null,
      `the remote '${remote}' is on ${parsed.host}, not on the forge's host ${forgeGitHost(target)}: ` +
        `the token for the forge is not sent elsewhere (set forge.remote to the forge's remote)`,
    );
  }
  return url;
}

/** Pushes the delivery branch at `headSha` and returns its PR: the one already open for it, or a new one. */
export async function openPullRequest(
  input: OpenPullRequestInput,
  env: NodeJS.ProcessEnv = process.env,
  forge: Forge = forgeOf(input.target, env),
): Promise<PullRequest> {
  // The branch is moved by force: only ever one of the saga's own, never a user's branch.
  if (!isSagaBranch(input.head))
    throw new ForgeCallError('push', null, `'${input.head}' is not a saga branch`);
  const remoteUrl = await forgeRemoteUrl(input.repo, input.remote, input.target);
  // Already there (`pr: single` delivers the integration branch, checked out in its worktree, where git
  // refuses any forced update): nothing to set.
  if ((await resolveCommit(input.repo, `refs/heads/${input.head}`)) !== input.headSha) {
    await runGit(input.repo, [
      'branch',
      '--force',
      '--no-track',
      '--end-of-options',
      input.head,
      input.headSha,
    ]);
  }
  await pushBranch({
    repoDir: input.repo,
    remoteUrl,
    branch: input.head,
    tokenEnv: input.target.tokenEnv,
    env,
  });
  const found = await forge.findPullRequest(input.head);
  if (!found) {
    const { head, base, title, body, draft } = input;
    return forge.createPullRequest({ head, base, title, body, draft });
  }
  const body = mergePrBody(found.body, input.body);
  const base = found.state === 'open' && found.base !== input.base ? input.base : undefined;
  if (body === found.body && !base) return found;
  return forge.updatePullRequest(found.number, { body, ...(base ? { base } : {}) });
}
