/**
 * The tracker a saga from an issue talks to, from the `intake:` keys (docs/PROCEDURE.md §14): the API root
 * and the NAME of the variable holding its token, never the token. A GitHub or Gitea tracker left out of
 * `intake:` is the `forge:` when the forge is of that kind; Linear has a default API and variable. A
 * missing setting is an error naming the key to set.
 */
import type { SagaConfig } from '../config/config';
import { DEFAULT_GITHUB_API, tokenPassProblems } from '../config/delivery-keys';
import { DEFAULT_LINEAR_API, type TrackerKind } from '../config/intake-keys';
import type { IntakeSettings, TrackerConnection } from './issue';
import type { TrackerRef } from './tracker-ref';

export type IntakeConfigPart = Pick<SagaConfig, 'intake' | 'forge'>;

/** The Linear API key's variable when `intake.linear` names none (the name Linear's own tools use). */
export const DEFAULT_LINEAR_TOKEN_ENV = 'LINEAR_API_KEY';

const NAMES: Record<TrackerKind, string> = { github: 'GitHub', gitea: 'Gitea', linear: 'Linear' };

/** The connection to the `kind` tracker, or an Error naming the `intake.<kind>` key to set. */
export function trackerConnection(config: IntakeConfigPart, kind: TrackerKind): TrackerConnection {
  const own = config.intake[kind];
  if (kind === 'linear')
    return {
      kind,
      url: own?.url ?? DEFAULT_LINEAR_API,
      tokenEnv: own?.token_env ?? DEFAULT_LINEAR_TOKEN_ENV,
    };
  const forge = config.forge?.kind === kind ? config.forge : undefined;
  const tokenEnv = own?.token_env ?? forge?.token_env;
  if (!tokenEnv)
    throw new Error(
      `intake.${kind}.token_env: a ${NAMES[kind]} tracker needs the name of the variable holding its token ` +
        `(or a forge: of kind ${kind})`,
    );
  const url = own?.url ?? forge?.url ?? (kind === 'github' ? DEFAULT_GITHUB_API : undefined);
  if (!url)
    throw new Error(
      `intake.${kind}.url: a ${NAMES[kind]} tracker needs its url (its web root, e.g. https://git.example.com)`,
    );
  return { kind, url, tokenEnv };
}

/**
 * What a saga from the issue `ref` runs with (RunSettings.intake). The tracker's token never enters a
 * sandbox: the config's schema refuses a `pass_env` naming an `intake.*.token_env`, and this refuses one
 * naming the variable the tracker falls back to (the forge's, Linear's default).
 */
export function intakeSettings(
  config: IntakeConfigPart & Partial<Pick<SagaConfig, 'pass_env' | 'agents'>>,
  ref: TrackerRef,
): IntakeSettings {
  const tracker = trackerConnection(config, ref.kind);
  const passing = tokenPassProblems({ pass_env: config.pass_env ?? [], agents: config.agents ?? {} }, [
    { key: `intake.${ref.kind}.token_env`, name: tracker.tokenEnv, what: `the ${ref.kind} tracker token` },
  ]);
  if (passing.length)
    throw new Error(
      passing.map((p) => `${p.path.join('.').replace(/\.(\d+)(?=\.|$)/g, '[$1]')}: ${p.message}`).join('; '),
    );
  return { tracker, questions: config.intake.questions };
}
