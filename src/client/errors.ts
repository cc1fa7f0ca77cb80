/** The CLI's documented exit codes (`saga --help`): 0 success, 1 user error, 2 environment error. */
export class UserError extends Error {
  override name = 'UserError';
}
export { EnvironmentError } from '../worker/temporal-binary';

export const EXIT = { ok: 0, user: 1, environment: 2 } as const;
