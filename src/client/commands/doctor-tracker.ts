/**
 * `saga doctor`'s tracker checks (docs/PROCEDURE.md §14): for each tracker a saga could start from (each under
 * `intake:`, and the forge's own kind, which a GitHub or Gitea tracker defaults to), its token's variable is
 * set (named, its value never printed), and the tracker answers as the token's user. Each failure names its fix.
 */
import type { CheckResult } from '../../activities/agents/checks';
import { createTracker } from '../../activities/tracker/trackers';
import type { SagaConfig } from '../../domain/config/config';
import { TRACKER_KINDS, type TrackerKind } from '../../domain/config/intake-keys';
import { trackerConnection } from '../../domain/tracker/intake-config';
import type { TrackerConnection } from '../../domain/tracker/issue';
import { oneTerminalLine } from '../../domain/text/terminal';
import { trackerFailure } from './start-from';

const SETUP = 'README, "Start from an issue"';

/** The kinds of tracker the config names: under `intake:`, or the forge's kind. */
export function configuredTrackers(config: Pick<SagaConfig, 'intake' | 'forge'>): TrackerKind[] {
  return TRACKER_KINDS.filter((kind) => config.intake[kind] !== undefined || config.forge?.kind === kind);
}

/**
 * The checks of every configured tracker. `repoWidening` is what the repository's own file sets beyond
 * what it may: a tracker it names is not called (the token would go where a repository says).
 */
export async function trackerChecks(
  config: Pick<SagaConfig, 'intake' | 'forge'>,
  repoWidening: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const kind of configuredTrackers(config)) {
    const name = `tracker ${kind}`;
    // A tracker left out of `intake:` is the forge: what the repository sets of either decides where it is.
    const keys = config.intake[kind] ? [`intake.${kind}`] : [`intake.${kind}`, 'forge.'];
    const fromRepo = repoWidening
      .map((s) => s.replace(/: .*$/, ''))
      .filter((key) => keys.some((k) => key.startsWith(k)));
    if (fromRepo.length > 0) {
      results.push({
        name,
        level: 'fail',
        detail:
          `not checked: the repository's saga.config.yaml sets ${fromRepo.join(', ')}, and your token is not ` +
          'sent to a tracker a repository names: put it in your own saga.config.yaml',
      });
      continue;
    }
    let connection: TrackerConnection;
    try {
      connection = trackerConnection(config, kind);
    } catch (error) {
      results.push({ name, level: 'fail', detail: `${(error as Error).message} (${SETUP})` });
      continue;
    }
    results.push(...(await connectionChecks(name, connection, env)));
  }
  return results;
}

/** The token's variable is set, and the tracker answers as its user. */
async function connectionChecks(
  name: string,
  connection: TrackerConnection,
  env: NodeJS.ProcessEnv,
): Promise<CheckResult[]> {
  const variable = connection.tokenEnv;
  if (!env[variable]?.trim())
    return [
      {
        name: `${name} token`,
        level: 'fail',
        detail: `${variable} is not set: export the ${connection.kind} token in ${variable} for saga and its worker (${SETUP})`,
      },
    ];
  const token: CheckResult = { name: `${name} token`, level: 'ok', detail: `${variable} is set` };
  try {
    const me = await createTracker(connection, env).whoAmI();
    return [
      token,
      { name, level: 'ok', detail: `${connection.url} answers as ${oneTerminalLine(me.login)}` },
    ];
  } catch (error) {
    const failure = trackerFailure(error, connection, connection.url, env);
    return [token, { name, level: 'fail', detail: failure.message.replace(/\.$/, '') }];
  }
}
