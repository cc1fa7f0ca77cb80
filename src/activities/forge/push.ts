/**
 * Pushing a branch to a forge with the worker's git (git-ops/run.ts: argument arrays, the safe `-c`
 * settings, a minimal environment) and the token supplied for this one command only: through the git
 * process's environment, a `credential.helper` set by `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`
 * that prints the token from a variable of that environment. The token never enters the URL, argv,
 * `.git/config`, a remote, history or a log; the helper's text is a constant of ours, never user text.
 */
import { GitError, runGit } from '../git-ops/run';
import { ForgeCallError, scrubSecret } from './forge-error';

/** The variable of the push's own environment the credential helper reads. */
const TOKEN_VARIABLE = 'SAGA_FORGE_TOKEN';

/**
 * Answers `get` only (so `store`/`erase` calls keep nothing): any user name works with a token on Gitea and
 * GitHub; `x-access-token` is the one GitHub documents for app tokens.
 */
const CREDENTIAL_HELPER = `!f() { test "$1" = get || exit 0; echo username=x-access-token; echo "password=$${TOKEN_VARIABLE}"; }; f`;

export interface PushBranchInput {
  repoDir: string;
  /** `https://HOST/OWNER/REPO.git`: no user name or password in it. */
  remoteUrl: string;
  branch: string;
  /** The environment variable (of `env`) holding the token: forge.token_env. */
  tokenEnv: string;
  /** Where the token is read from, at the moment of the push; normally the worker's process.env. */
  env?: NodeJS.ProcessEnv;
  /** For diagnosis (and the tests that prove it holds no token): git's GIT_TRACE and GIT_TRACE_CURL go here. */
  traceFile?: string;
}

/** The URL, refused when it carries credentials or is not http(s) (the helper only serves http). */
export function checkRemoteUrl(remoteUrl: string): URL {
  let url: URL;
  try {
    url = new URL(remoteUrl);
  } catch {
    throw new ForgeCallError(
      'push',
      null,
      `the remote URL is not a URL: '${remoteUrl.replace(/\/\/[^/@]*@/, '//***@')}'`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new ForgeCallError(
      'push',
      null,
      `the remote URL carries credentials (${url.protocol}//***@${url.host}${url.pathname}): give the URL without them; the token comes from forge.token_env`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ForgeCallError(
      'push',
      null,
      `the remote URL must be http(s), not ${url.protocol} (${url.host}${url.pathname})`,
    );
  }
  return url;
}

/** The environment git gets for the push on top of the worker's minimal one: the helper and the token. */
export function pushEnv(token: string, traceFile?: string): NodeJS.ProcessEnv {
  return {
    // The first entry empties the helper list, so no helper of the user's (`store`, a keychain) sees the token.
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'credential.helper',
    GIT_CONFIG_VALUE_0: '',
    GIT_CONFIG_KEY_1: 'credential.helper',
    GIT_CONFIG_VALUE_1: CREDENTIAL_HELPER,
    [TOKEN_VARIABLE]: token,
    ...(traceFile ? { GIT_TRACE: traceFile, GIT_TRACE_CURL: traceFile } : {}),
  };
}

/** Pushes `branch` as it is in `repoDir` to `remoteUrl` (no force) and returns the pushed commit's sha. */
export async function pushBranch(input: PushBranchInput): Promise<string> {
  checkRemoteUrl(input.remoteUrl);
  const token = (input.env ?? process.env)[input.tokenEnv]?.trim();
  if (!token) {
    throw new ForgeCallError(
      'push',
      null,
      `the forge token is missing: set the environment variable ${input.tokenEnv} (forge.token_env) for the worker`,
    );
  }
  const ref = `refs/heads/${input.branch}`;
  await runGit(input.repoDir, ['check-ref-format', ref]);
  const sha = (
    await runGit(input.repoDir, ['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`])
  ).trim();
  try {
    // The sha itself is pushed, so the answer is exactly what the forge received.
    await runGit(
      input.repoDir,
      ['push', '--porcelain', '--no-recurse-submodules', input.remoteUrl, `${sha}:${ref}`],
      undefined,
      pushEnv(token, input.traceFile),
    );
  } catch (error) {
    if (error instanceof GitError) {
      throw new GitError(error.args, error.cwd, error.exitCode, scrubSecret(error.stderr, token));
    }
    throw error;
  }
  return sha;
}
