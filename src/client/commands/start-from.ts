/**
 * `saga start --from REF` and `saga watch --from SCOPE` (docs/PROCEDURE.md §14): the reference read, the
 * tracker the config names for it, and the tracker asked from the CLI before anything starts. The token is
 * read from the variable the config names; only that NAME appears in a message, never its value. Tracker
 * text in an error (its own message) is printed as one line with its controls stripped.
 */
import { createTracker } from '../../activities/tracker/trackers';
import { scrubSecret } from '../../activities/forge/forge-error';
import type { SagaConfig } from '../../domain/config/config';
import type { TrackerKind } from '../../domain/config/intake-keys';
import { intakeSource } from '../../domain/tracker/intake-source';
import { trackerConnection } from '../../domain/tracker/intake-config';
import type { IntakeSource, TrackerConnection } from '../../domain/tracker/issue';
import {
  parseTrackerRef,
  parseTrackerScope,
  trackerRefText,
  trackerScopeText,
  type TrackerRef,
  type TrackerScope,
} from '../../domain/tracker/tracker-ref';
import { oneTerminalLine } from '../../domain/text/terminal';
import { EnvironmentError, UserError } from '../errors';

const SETUP = 'README, "Start from an issue"';

/** `--from REF` of `saga start`; a bad one names the forms. */
export function fromRef(text: string): TrackerRef {
  const parsed = parseTrackerRef(text);
  if (!parsed.ok) throw new UserError(`--from: ${parsed.error}.`);
  return parsed.value;
}

/** `--from SCOPE` of `saga watch`; a bad one names the forms. */
export function fromScope(text: string): TrackerScope {
  const parsed = parseTrackerScope(text);
  if (!parsed.ok) throw new UserError(`--from: ${parsed.error}.`);
  return parsed.value;
}

/** The tracker of `kind` as the config names it, with its token's variable set in `env`. */
export function connectionFor(
  config: Pick<SagaConfig, 'intake' | 'forge'>,
  kind: TrackerKind,
  env: NodeJS.ProcessEnv = process.env,
): TrackerConnection {
  let connection: TrackerConnection;
  try {
    connection = trackerConnection(config, kind);
  } catch (error) {
    throw new UserError(`--from ${kind}: ${(error as Error).message} in saga.config.yaml (${SETUP}).`);
  }
  if (!env[connection.tokenEnv]?.trim())
    throw new UserError(
      `--from ${kind}: ${connection.tokenEnv} is not set: export the ${kind} token in ${connection.tokenEnv} ` +
        `(${tokenKey(config, kind)}) for saga and its worker (${SETUP}).`,
    );
  return connection;
}

/** Which key named the token's variable, for the message that says it is not set. */
function tokenKey(config: Pick<SagaConfig, 'intake' | 'forge'>, kind: TrackerKind): string {
  return !config.intake[kind] && config.forge?.kind === kind ? 'forge.token_env' : `intake.${kind}.token_env`;
}

/** The issue, read once from the CLI, as the saga keeps it (untrusted text made safe). */
export async function readIssueSource(
  connection: TrackerConnection,
  ref: TrackerRef,
  env: NodeJS.ProcessEnv = process.env,
): Promise<IntakeSource> {
  try {
    return intakeSource(await createTracker(connection, env).issue(ref));
  } catch (error) {
    throw trackerFailure(error, connection, trackerRefText(ref), env);
  }
}

/** The open issues of `scope` labelled `label`: proves the tracker answers before a watch starts. */
export async function readLabelledIssues(
  connection: TrackerConnection,
  scope: TrackerScope,
  label: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<TrackerRef[]> {
  try {
    return await createTracker(connection, env).labelledIssues(scope, label);
  } catch (error) {
    throw trackerFailure(error, connection, trackerScopeText(scope), env);
  }
}

/**
 * What went wrong asking the tracker about `what`, and what to change: a refused token or a missing issue is
 * the user's to fix (exit 1); a tracker that does not answer, the environment's (exit 2).
 */
export function trackerFailure(
  error: unknown,
  connection: TrackerConnection,
  what: string,
  env: NodeJS.ProcessEnv = process.env,
): Error {
  const message = oneTerminalLine(
    scrubSecret((error as Error)?.message ?? String(error), env[connection.tokenEnv]),
  );
  const status = (error as { status?: unknown } | null)?.status;
  const token = connection.tokenEnv;
  const rights = 'issues: read and write';
  switch (typeof status === 'number' ? status : null) {
    case 401:
      return new UserError(
        `${what}: ${message}. The token in ${token} is refused: it is wrong, expired or revoked; create a ` +
          `new one (${rights}).`,
      );
    case 403:
      return new UserError(
        `${what}: ${message}. The token in ${token} lacks a permission: it needs ${rights}.`,
      );
    case 404:
      return new UserError(
        `${what}: not found on ${connection.url}, or not visible to the user of ${token}: check the ` +
          `reference, and that the token's user may see it (${message}).`,
      );
    case 400:
    case 410:
    case 422:
      return new UserError(`${what}: ${message}.`);
    default:
      return new EnvironmentError(
        `${what}: ${message}. Check the tracker's url (${connection.url}) and that it is up and reachable ` +
          'from here.',
      );
  }
}
