/**
 * `saga doctor`'s forge checks, when the config names a `forge:`: the token's variable is set (named, its
 * value never printed), the forge answers, the token's user may push and open pull requests on the
 * repository, and the repository's forge remote exists and is on the forge's host (the token goes nowhere
 * else). Each failure names its fix.
 */
import type { CheckResult } from '../../activities/agents/checks';
import { ForgeCallError } from '../../activities/forge/forge-error';
import { forgeOf, forgeRemoteUrl } from '../../activities/forge/open-pull-request';
import type { ForgeConfig } from '../../domain/config/delivery-keys';
import { forgeTarget } from '../../domain/delivery/delivery-config';
import type { ForgeTarget } from '../../domain/delivery/forge-shapes';

const SETUP = 'README, "Deliver as pull requests"';

/**
 * The forge checks for `forge` (and the remote of `repo`, when a repository is checked). `repoWidening` is
 * what the repository's own file sets beyond what it may: when that includes the forge, nothing is called,
 * as the forge (and where the token goes) would be the repository's choice, not the user's.
 */
export async function forgeChecks(
  forge: ForgeConfig,
  repo: string | undefined,
  repoWidening: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<CheckResult[]> {
  const target = forgeTarget(forge);
  const where = `${forge.repo} on ${target.url} (${target.kind})`;
  const fromRepo = repoWidening.map((s) => s.replace(/: .*$/, '')).filter((key) => key.startsWith('forge.'));
  if (fromRepo.length > 0)
    return [
      {
        name: 'forge',
        level: 'fail',
        detail:
          `not checked: the repository's saga.config.yaml sets ${fromRepo.join(', ')}, and your token is not ` +
          `sent to a forge a repository names: put the forge in your own saga.config.yaml (saga start ` +
          'refuses it unless given --trust-repo-config)',
      },
    ];
  const results: CheckResult[] = [];
  if (!env[target.tokenEnv]?.trim()) {
    results.push({
      name: 'forge token',
      level: 'fail',
      detail:
        `${target.tokenEnv} (forge.token_env) is not set: export the forge token in ${target.tokenEnv} for ` +
        `saga and its worker (${SETUP})`,
    });
  } else {
    results.push({ name: 'forge token', level: 'ok', detail: `${target.tokenEnv} is set` });
    results.push(await accessCheck(target, where, env));
  }
  if (repo) results.push(await remoteCheck(repo, forge.remote, target));
  return results;
}

/** The forge answers, and the token's user may push and open pull requests on the repository. */
async function accessCheck(target: ForgeTarget, where: string, env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const name = 'forge';
  try {
    const me = await forgeOf(target, env).whoAmI();
    if (me.canPush)
      return { name, level: 'ok', detail: `${where}: ${me.login} can push and open pull requests` };
    return {
      name,
      level: 'fail',
      detail:
        `${where}: ${me.login} (the user of ${target.tokenEnv}) cannot push to ${target.owner}/${target.repo}: ` +
        `give ${me.login} write access to it, or use the token of a user who has it`,
    };
  } catch (error) {
    return { name, level: 'fail', detail: `${where}: ${accessFix(error, target)}` };
  }
}

/** What went wrong talking to the forge, and what to change. */
function accessFix(error: unknown, target: ForgeTarget): string {
  const message = (error as Error).message;
  if (!(error instanceof ForgeCallError)) return message;
  const token = target.tokenEnv;
  const scopes =
    target.kind === 'gitea'
      ? 'scopes write:repository and read:user'
      : 'Contents, Pull requests: read/write; Metadata, Commit statuses, Checks: read (classic: repo)';
  switch (error.status) {
    case null:
      return `${message}. Check forge.url and that the forge is up and reachable from here`;
    case 401:
      return `${message}. The token in ${token} is refused: it is wrong, expired or revoked; create a new one (${scopes})`;
    case 403:
      return `${message}. The token in ${token} lacks a permission: it needs ${scopes}`;
    case 404:
      return (
        `${message}. forge.repo ${target.owner}/${target.repo} is not found or not visible to the token's user: ` +
        `check forge.repo, and that the token may see the repository`
      );
    default:
      return message;
  }
}

/** The forge remote exists in the repository and points at the forge's host. */
async function remoteCheck(repo: string, remote: string, target: ForgeTarget): Promise<CheckResult> {
  const name = 'forge remote';
  try {
    const url = await forgeRemoteUrl(repo, remote, target);
    return { name, level: 'ok', detail: `${remote} is ${url}` };
  } catch (error) {
    if (error instanceof ForgeCallError) return { name, level: 'fail', detail: error.message };
    return {
      name,
      level: 'fail',
      detail:
        `${repo} has no remote '${remote}' (forge.remote): add it (git remote add ${remote} URL of ` +
        `${target.owner}/${target.repo}) or set forge.remote to the remote that is the forge's copy`,
    };
  }
}
