/**
 * The CLI's errors and its documented exit codes (`saga --help`, the CLI contract): 0 success, 1 a UserError
 * (bad input, unknown saga), 2 an EnvironmentError (no server, no git; defined below the client, in
 * src/worker/errors.ts, as the worker throws it too). runCli (cli.ts) maps each to its code.
 */
export class UserError extends Error {
  override name = 'UserError';
}
export { EnvironmentError } from '../worker/errors';

export const EXIT = { ok: 0, user: 1, environment: 2 } as const;

/** The exit codes, as `saga --help` ends. */
export const EXIT_CODES_NOTE =
  'Exit codes: 0 success, 1 user error, 2 environment error (no server, no git).';
