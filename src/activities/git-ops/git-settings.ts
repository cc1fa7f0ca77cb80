/**
 * The worker's git settings: a minimal environment, the safe `-c` settings every command gets, and the
 * error a failed command raises (run.ts runs git with them; drivers.ts reads the user's drivers with them).
 */

/** A failed git command; the message names the command, folder and git's own stderr. */
export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly cwd: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed in ${cwd} (exit ${exitCode ?? 'none'}): ${stderr.trim()}`);
    this.name = 'GitError';
  }
}

export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * git run by the worker is not the agent's: a minimal environment (no worker secret for a hook
 * or filter to read, no GIT_* variable redirecting the command) ...
 */
export function gitEnv(): NodeJS.ProcessEnv {
  // GIT_LFS_SKIP_SMUDGE: a checkout or merge of an agent's branch never fetches from a URL its `.lfsconfig` names.
  const env: NodeJS.ProcessEnv = { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', GIT_LFS_SKIP_SMUDGE: '1' };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'TZ', 'XDG_CONFIG_HOME']) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  return env;
}

/**
 * ... and nothing of a repository an agent touched runs: no hooks (the user's own run confined, with
 * handoff.run_hooks), no fsmonitor or other configured program, no ext:: transport, no recursion into
 * submodules (a nested repository's own config names its own filters; see nested-repos.ts), and no
 * program a driver names (driverOverrides).
 */
export const SAFE_GIT_CONFIG = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.sshCommand=ssh',
  '-c',
  'core.editor=true',
  '-c',
  'core.pager=cat',
  '-c',
  'diff.external=',
  '-c',
  'protocol.ext.allow=never',
  '-c',
  'submodule.recurse=false',
  '-c',
  'diff.ignoreSubmodules=all',
  '-c',
  'status.submoduleSummary=false',
];
