/** Placeholder until the Linear adapter lands (its file replaces this one at merge). */
import type { TrackerConnection } from '../../domain/tracker/issue';
import type { Tracker } from './port';

export function createLinearTracker(
  _connection: TrackerConnection,
  _env: NodeJS.ProcessEnv = process.env,
): Tracker {
  throw new Error('the Linear tracker is not built yet');
}
