/**
 * A user's clone of the test Gitea's `alice/demo` (test/harness/gitea.ts) in a temp folder, with a saga's
 * two milestones on it the way integration leaves them: `saga/greet/integration` holds m1 (a.txt) then m2
 * (b.txt), each delivery branch is the integration as it stood after its milestone, and the integration
 * branch is checked out in a worktree of its own (as while a saga runs), the clone itself on `main`.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { deliveryBranch, integrationBranch } from '../../src/domain/contract/naming';
import { renderPrBody } from '../../src/domain/delivery/pr-body';
import type { TestGitea } from './gitea';

export const M1 = deliveryBranch('greet', 1);
export const M2 = deliveryBranch('greet', 2);
export const INTEGRATION = integrationBranch('greet');

/** The saga's part of milestone `id`'s PR body (renderPrBody), its one exit criterion `result`. */
export function sagaPrBody(id: number, result: 'passed' | null = null): string {
  return renderPrBody({
    saga: 'greet',
    goal: 'Greet people',
    milestone: { id, title: `Milestone ${id}` },
    stackedOn: id > 1 ? id - 1 : null,
    exitCriteria: [{ id: 'E1', text: 'greet prints hello', result }],
    tasks: [{ id: `${id}.1`, title: 'Write it', agent: 'demo', status: 'integrated' }],
    costUsd: null,
    boardUrl: null,
    closes: null,
  });
}

export interface DeliveryRepo {
  repo: string;
  integrationWorktree: string;
  git(args: string[], cwd?: string, extraEnv?: Record<string, string>): string;
  head(branch: string): string;
  /** Commits `text` as `file` on `branch` (checked out in the clone for it) and returns the new head. */
  commit(branch: string, file: string, text: string): string;
  /** The forge's branches as `git ls-remote` sees them (with alice's token, as a person would look). */
  remoteHeads(): Record<string, string>;
}

export function deliveryRepo(gitea: TestGitea, root: string): DeliveryRepo {
  const repo = path.join(root, 'repo');
  const integrationWorktree = path.join(root, 'integration');
  const home = path.join(root, 'home');
  const git = (args: string[], cwd = repo, extraEnv: Record<string, string> = {}): string =>
    execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
      cwd,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1', ...extraEnv },
    }).trim();
  const head = (branch: string) => git(['rev-parse', `refs/heads/${branch}`]);
  const commit = (branch: string, file: string, text: string): string => {
    git(['checkout', '-q', branch]);
    writeFileSync(path.join(repo, file), text);
    git(['add', file]);
    git(['commit', '-q', '-m', `${branch}: ${file}`]);
    return head(branch);
  };
  const remoteHeads = (): Record<string, string> => {
    const out = git(['ls-remote', '--heads', gitea.repo.cloneUrl], repo, gitea.gitEnv('alice'));
    return Object.fromEntries(
      out
        .split('\n')
        .map((line) => line.split('\t'))
        .map(([sha, name]) => [name!.replace('refs/heads/', ''), sha!]),
    );
  };
  execFileSync('git', ['clone', '-q', gitea.repo.cloneUrl, repo], {
    env: { PATH: process.env.PATH, HOME: home, ...gitea.gitEnv('alice') },
  });
  git(['checkout', '-q', '-b', INTEGRATION]);
  git(['branch', M1, commit(INTEGRATION, 'a.txt', 'one\ntwo\nthree\n')]);
  git(['branch', M2, commit(INTEGRATION, 'b.txt', 'bee\n')]);
  git(['checkout', '-q', 'main']);
  git(['worktree', 'add', '-q', integrationWorktree, INTEGRATION]);
  return { repo, integrationWorktree, git, head, commit, remoteHeads };
}
