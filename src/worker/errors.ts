/**
 * A problem of the machine rather than of the user's input: no Temporal server answers, no `temporal` CLI, a
 * bad host setting. The worker's modules throw it and the CLI's commands too; the CLI exits with 2 on it (the
 * exit codes: src/client/errors.ts). It lives here, below the client, so both layers can use it.
 */
export class EnvironmentError extends Error {
  override name = 'EnvironmentError';
}
