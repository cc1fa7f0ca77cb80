/** What landed work changed that tools run on their own: named at acceptance and in REPORT.md. */
import {
  autoRunFiles,
  isPackageJson,
  packageInstallScripts,
  type AutoRunFile,
} from '../../domain/record/auto-run-files';
import { splitZ } from './queries';
import { execGit, runGit } from './run';

/** The largest package.json read for its install scripts (larger ones are listed as they are). */
const PACKAGE_JSON_MAX = 1024 * 1024;

/**
 * The files `branch` adds or changes since it left `base` (deletions are not listed) that a tool runs on its
 * own. Read from the object store (`git diff --name-only`, `git cat-file`), so no filter, textconv or hook of
 * the landed work runs while it is read.
 */
export async function landedAutoRunFiles(repo: string, base: string, branch: string): Promise<AutoRunFile[]> {
  const range = `refs/heads/${base}...refs/heads/${branch}`;
  const paths = splitZ(
    await runGit(repo, [
      'diff',
      '--name-only',
      '-z',
      '--no-renames',
      '--no-ext-diff',
      '--no-textconv',
      '--diff-filter=d',
      range,
      '--',
    ]),
  );
  const scripts: Record<string, string[]> = {};
  for (const file of paths.filter(isPackageJson)) {
    const spec = `refs/heads/${branch}:${file}`;
    const size = await execGit(repo, ['cat-file', '-s', spec]);
    if (size.code !== 0) continue;
    if (Number(size.stdout.trim()) > PACKAGE_JSON_MAX) {
      scripts[file] = ['(too large to read)'];
      continue;
    }
    const blob = await execGit(repo, ['cat-file', 'blob', spec]);
    if (blob.code === 0) scripts[file] = packageInstallScripts(blob.stdout);
  }
  return autoRunFiles(paths, scripts);
}
