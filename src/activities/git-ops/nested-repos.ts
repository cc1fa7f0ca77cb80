/**
 * Repositories an agent planted inside a worktree. A nested repository's own config names its own programs
 * (a clean filter, a textconv), and git runs them in a sub-git wherever it treats the folder as a
 * submodule: `add -A` of a gitlink, `status`, `diff`. The worker's git never gets there: a worktree holding
 * a nested `.git` or a gitlink its base does not have is refused before any such command runs, and the
 * refusal changes nothing (no file removed, nothing staged).
 */
import { type Dirent, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { samplePaths } from './paths';
import { splitZ } from './queries';
import { runGit } from './run';

const GITLINK = '160000';

/** Gitlinks in `raw` (diff --raw -z output) that the old side did not have at that path. */
function newGitlinks(raw: string): string[] {
  const tokens = splitZ(raw);
  const found: string[] = [];
  for (let i = 0; i + 1 < tokens.length; i += 2) {
    const [oldMode, newMode] = tokens[i]!.slice(1).split(' ');
    if (newMode === GITLINK && oldMode !== GITLINK) found.push(tokens[i + 1]!);
  }
  return found;
}

/**
 * Every entry named `.git` below `root` (not the root's own pointer), in folders git can see: git-ignored
 * folders (listed in `ignored`, as `dir/`) are never read by the worker's git, so a virtualenv's editable
 * checkout there is left alone. Symbolic links are not followed.
 */
async function dotGitEntries(root: string, ignored: Set<string>): Promise<string[]> {
  const found: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries: Dirent[] = await fs
      .readdir(path.join(root, rel), { withFileTypes: true })
      .catch(() => [] as Dirent[]);
    const dirs: string[] = [];
    for (const entry of entries) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.name.toLowerCase() === '.git') {
        if (rel !== '') found.push(child);
      } else if (entry.isDirectory() && !ignored.has(`${child}/`)) dirs.push(child);
    }
    await Promise.all(dirs.map(walk));
  };
  await walk('');
  return found.sort();
}

/** What a worktree holds that would make the worker's git run a nested repository's programs. */
export interface NestedRepos {
  /** `.git` files or folders below the root. */
  dotGits: string[];
  /** Gitlinks (mode 160000) in the index or HEAD that `base` does not have. */
  gitlinks: string[];
}

/**
 * The nested repositories of `worktree` relative to `base` (a commit); read with commands that look at no
 * file's content and enter no submodule (ls-files, diff-index --cached, diff-tree).
 */
export async function findNestedRepos(worktree: string, base: string): Promise<NestedRepos> {
  const [ignoredOut, indexOut, headOut] = await Promise.all([
    runGit(worktree, ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']),
    runGit(worktree, ['diff-index', '--cached', '--raw', '-z', '--no-renames', base]),
    runGit(worktree, ['diff-tree', '-r', '--raw', '-z', '--no-renames', base, 'HEAD']),
  ]);
  const ignored = new Set(splitZ(ignoredOut).filter((p) => p.endsWith('/')));
  const dotGits = await dotGitEntries(worktree, ignored);
  const gitlinks = [...new Set([...newGitlinks(indexOut), ...newGitlinks(headOut)])].sort();
  return { dotGits, gitlinks };
}

/** Why the worktree is refused, naming the paths; null when it holds no nested repository. */
export function nestedRepoRefusal(worktree: string, found: NestedRepos): string | null {
  const parts = [
    ...(found.dotGits.length > 0 ? [`nested .git entries (${samplePaths(found.dotGits)})`] : []),
    ...(found.gitlinks.length > 0
      ? [`gitlinks its base does not have (${samplePaths(found.gitlinks)})`]
      : []),
  ];
  if (parts.length === 0) return null;
  return (
    `'${worktree}' holds ${parts.join(' and ')}: git would run a nested repository's own programs ` +
    '(filters, textconv) outside the sandbox, so the worker ran no git there that reads them. Nothing was ' +
    'staged or committed and no file was removed; delete or move the nested repository (or vendor its ' +
    'files), then retry'
  );
}

/** The refusal for `worktree` against `base`, or null when it holds no nested repository. */
export async function refuseNestedRepos(worktree: string, base: string): Promise<string | null> {
  return nestedRepoRefusal(worktree, await findNestedRepos(worktree, base));
}
