/** The saga home (sagas' directories, costs, the payload store): SAGA_HOME, else `~/.sagas`. */
export const sagaHomeOf = (env: Readonly<Record<string, string | undefined>>, homeDir: string): string =>
  env.SAGA_HOME || `${homeDir.replace(/\/+$/, '')}/.sagas`;
