/**
 * The GitHub stand-in's repository: a real bare git repository that `git http-backend` (git-http.ts) serves
 * and the API reads its branches from, so a pull request's head and base are what was pushed, and a merge
 * through the API is a real commit on the base branch (merge, squash or rebase, as GitHub makes them).
 * Every git call is an argument array with an environment of its own (no user or system config).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';

/** GitHub's own identity on the commits it makes (merges), and the stand-in's initial commit. */
const IDENTITY = {
  GIT_AUTHOR_NAME: 'GitHub',
  GIT_AUTHOR_EMAIL: 'noreply@github.com',
  GIT_COMMITTER_NAME: 'GitHub',
  GIT_COMMITTER_EMAIL: 'noreply@github.com',
};

export type MergeMethod = 'merge' | 'squash' | 'rebase';

export class BareRepo {
  /** The bare repository's directory: `<root>/<owner>/<name>.git`, as http-backend finds it. */
  readonly dir: string;

  constructor(
    /** GIT_PROJECT_ROOT: the folder holding `<owner>/<name>.git`. */
    readonly root: string,
    owner: string,
    name: string,
  ) {
    this.dir = path.join(root, owner, `${name}.git`);
  }

  /** The environment every git call here gets (also http-backend's, plus its CGI variables). */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return { PATH: process.env.PATH, HOME: this.root, GIT_CONFIG_NOSYSTEM: '1', ...IDENTITY, ...extra };
  }

  git(args: string[], opts: { input?: string; env?: Record<string, string>; cwd?: string } = {}): string {
    return execFileSync('git', args, {
      cwd: opts.cwd ?? this.dir,
      env: this.env(opts.env),
      input: opts.input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
    }).trim();
  }

  /** Creates the repository with one commit (a README) on `defaultBranch`. */
  init(defaultBranch: string, readme: string): void {
    mkdirSync(this.dir, { recursive: true });
    this.git(['init', '-q', '--bare', `--initial-branch=${defaultBranch}`, this.dir], { cwd: this.root });
    this.commit(defaultBranch, { 'README.md': readme }, 'Initial commit');
  }

  /** Branch name → head sha, read from the repository. */
  branches(): Map<string, string> {
    const out = this.git(['for-each-ref', '--format=%(refname:lstrip=2) %(objectname)', 'refs/heads/']);
    const map = new Map<string, string>();
    for (const line of out.split('\n').filter(Boolean)) {
      const [name, sha] = line.split(' ');
      map.set(name, sha);
    }
    return map;
  }

  /** Whether `ancestor` is reachable from `commit`. */
  isAncestor(ancestor: string, commit: string): boolean {
    try {
      this.git(['merge-base', '--is-ancestor', ancestor, commit]);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A commit on `branch` (created from the default branch's head, or from `from`) writing `files`, made
   * with plumbing in a temporary index: what a push of that commit would leave. Returns its sha.
   */
  commit(branch: string, files: Record<string, string>, message: string, from?: string): string {
    const current = this.branches();
    const parent = current.get(branch) ?? from ?? [...current.values()][0];
    const tmp = mkdtempSync(path.join(this.root, 'index-'));
    const index = { GIT_INDEX_FILE: path.join(tmp, 'index') };
    try {
      if (parent) this.git(['read-tree', parent], { env: index });
      for (const [file, text] of Object.entries(files)) {
        const blob = this.git(['hash-object', '-w', '--stdin'], { input: text });
        this.git(['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`], { env: index });
      }
      const tree = this.git(['write-tree'], { env: index });
      const sha = this.git(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message]);
      this.git(['update-ref', `refs/heads/${branch}`, sha]);
      return sha;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  /**
   * Merges `head` into the branch `base` as GitHub's merge button does and moves `base` (only if it is still
   * at `baseSha`). Returns the new head of `base`, or null when the change does not apply cleanly.
   */
  merge(base: string, baseSha: string, head: string, method: MergeMethod, message: string): string | null {
    let sha: string | null;
    if (method === 'rebase') sha = this.rebase(baseSha, head);
    else {
      const tree = this.mergeTree(baseSha, head);
      if (!tree) return null;
      const parents = method === 'merge' ? ['-p', baseSha, '-p', head] : ['-p', baseSha];
      sha = this.git(['commit-tree', tree, ...parents, '-m', message]);
    }
    if (sha) this.git(['update-ref', `refs/heads/${base}`, sha, baseSha]);
    return sha;
  }

  private mergeTree(ours: string, theirs: string): string | null {
    try {
      return this.git(['merge-tree', '--write-tree', '--no-messages', ours, theirs]).split('\n')[0];
    } catch {
      return null; // exit 1: conflicts
    }
  }

  /** `head`'s commits replayed onto `onto` in a temporary worktree (GitHub's "rebase and merge"). */
  private rebase(onto: string, head: string): string | null {
    const work = mkdtempSync(path.join(this.root, 'rebase-'));
    try {
      this.git(['worktree', 'add', '-q', '--detach', work, head]);
      this.git(['rebase', '-q', onto], { cwd: work });
      return this.git(['rev-parse', 'HEAD'], { cwd: work });
    } catch {
      return null;
    } finally {
      try {
        this.git(['worktree', 'remove', '--force', work]);
      } catch {
        rmSync(work, { recursive: true, force: true });
        this.git(['worktree', 'prune']);
      }
    }
  }
}
