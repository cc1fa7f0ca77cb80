/** The tracker adapter for a connection, by its kind (the token is read from `env` at each call). */
import type { TrackerConnection } from '../../domain/tracker/issue';
import { createGiteaTracker } from './gitea';
import { createGithubTracker } from './github';
import { createLinearTracker } from './linear';
import type { Tracker } from './port';
import { spendFrom } from './tracker-common';

export function createTracker(connection: TrackerConnection, env: NodeJS.ProcessEnv = process.env): Tracker {
  switch (connection.kind) {
    case 'github':
      return createGithubTracker(connection, env);
    case 'gitea':
      return createGiteaTracker(connection, env);
    case 'linear':
      return createLinearTracker(connection, env, spendFrom(connection));
  }
}
