/** Where a saga starts from: the repository's toplevel, base branch and commit, and whether it is clean. */
import type { z } from 'zod';
import { listedPaths } from './paths';
import { dirtyFiles, fail, repoToplevel, resolveCommit } from './queries';
import { execGit } from './run';
import { CheckRepoInputSchema, parseInput } from './schemas';

/** The base branch when none is named: the one checked out (a detached HEAD has none). */
async function checkedOutBranch(repo: string): Promise<string> {
  const out = await execGit(repo, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  if (out.code !== 0) {
    throw fail('NoBaseBranch', `'${repo}' is on a detached HEAD: name the base branch explicitly`);
  }
  return out.stdout.trim();
}

export async function checkRepo(raw: z.input<typeof CheckRepoInputSchema>) {
  const input = parseInput('checkRepo', CheckRepoInputSchema, raw);
  const repo = await repoToplevel(input.repo);
  const base = input.base || (await checkedOutBranch(repo));
  const baseCommit = await resolveCommit(repo, base);
  if (!baseCommit) {
    throw fail('UnknownBase', `Base '${base}' does not name a commit in '${repo}' (is the repo empty?)`);
  }
  const dirty = await dirtyFiles(repo);
  return {
    repo,
    base,
    baseCommit,
    clean: dirty.length === 0,
    dirtyFiles: listedPaths(dirty),
    dirtyFileCount: dirty.length,
  };
}
