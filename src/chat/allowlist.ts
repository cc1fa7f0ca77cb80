/**
 * Who may answer: SAGA_APPROVERS is a comma-separated list of user ids; `NAME=USER` allows USER for the
 * saga NAME only. Ids are compared exactly (Slack user ids, or whatever the webhook caller sends as `user`).
 */
export interface Approvers {
  mayAnswer(saga: string, user: string): boolean;
  describe(): string;
}

export function parseApprovers(text: string): Approvers {
  const global = new Set<string>();
  const perSaga = new Map<string, Set<string>>();
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const eq = entry.indexOf('=');
    if (eq < 0) {
      global.add(entry);
      continue;
    }
    const saga = entry.slice(0, eq).trim();
    const user = entry.slice(eq + 1).trim();
    if (!saga || !user) throw new Error(`SAGA_APPROVERS: '${entry}' must be USER or SAGA=USER`);
    perSaga.set(saga, (perSaga.get(saga) ?? new Set()).add(user));
  }
  if (global.size === 0 && perSaga.size === 0) throw new Error('SAGA_APPROVERS lists nobody');
  return {
    mayAnswer: (saga, user) => global.has(user) || (perSaga.get(saga)?.has(user) ?? false),
    describe: () =>
      [
        global.size ? `${global.size} for every saga` : '',
        ...[...perSaga].map(([saga, users]) => `${users.size} for ${saga}`),
      ]
        .filter(Boolean)
        .join(', '),
  };
}
