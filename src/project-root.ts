import { existsSync } from 'node:fs';
import path from 'node:path';

/** The saga project's own folder (works from src/ under ts and from dist/ after the build). */
function findProjectRoot(start: string): string {
  let dir = start;
  while (!existsSync(path.join(dir, 'package.json')) || !existsSync(path.join(dir, 'bin', 'saga'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start, '..', '..');
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = findProjectRoot(__dirname);
