/**
 * STAND-IN until the domain helper's intake-config.ts lands (theirs replaces this file at merge): the
 * tracker connection a config names for a kind of tracker.
 */
import type { SagaConfig } from '../config/config';
import { DEFAULT_LINEAR_API, type TrackerKind } from '../config/intake-keys';
import type { TrackerConnection } from './issue';

export function trackerConnection(
  config: Pick<SagaConfig, 'intake' | 'forge'>,
  kind: TrackerKind,
): TrackerConnection {
  const own = config.intake[kind];
  const forge = config.forge?.kind === kind ? config.forge : undefined;
  const url =
    own?.url ??
    forge?.url ??
    (kind === 'github' ? 'https://api.github.com' : kind === 'linear' ? DEFAULT_LINEAR_API : undefined);
  if (!url) throw new Error(`intake.${kind}.url: a ${kind} tracker needs its url`);
  const tokenEnv = own?.token_env ?? forge?.token_env ?? (kind === 'linear' ? 'LINEAR_API_KEY' : undefined);
  if (!tokenEnv) throw new Error(`intake.${kind}.token_env: name the variable holding the ${kind} token`);
  return { kind, url, tokenEnv };
}
