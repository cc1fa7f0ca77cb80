/**
 * Finding a program as the shell does: the one PATH search of the code base (the sandbox's confine, the
 * plan's check resolution, `saga doctor`'s agent checks and the worker's `temporal` CLI all use it).
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';

/** Whether `file` is a file this process may execute (a folder or a file without the x bit is not). */
export function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Where the shell would find `program`: as given when it has a slash (if it exists: running it then says
 * whether it may, exit 126), else the first executable file of that name in `searchPath`'s folders.
 */
export const onPath = (program: string, searchPath = process.env.PATH ?? ''): string | null => {
  if (program.includes('/')) return existsSync(program) ? program : null;
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
};

/** The program a profile's command runs, if it can: `onPath`, and a path given with a slash executable. */
export function findProgram(program: string, searchPath = process.env.PATH ?? ''): string | null {
  const found = onPath(program, searchPath);
  return found && isExecutableFile(found) ? found : null;
}
