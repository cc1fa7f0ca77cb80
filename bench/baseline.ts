/**
 * The naive sequential baseline: what a person (or a shell loop) would do by hand for the same plan. Per
 * task, in dependency order: `git worktree add` from the integration branch, run the agent, run the task's
 * check, commit, merge into the integration branch, remove the worktree; then the milestone check.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { mergeOrder } from '../src/domain/fleet/schedule';
import { git, taskCheck, TIMED_AGENT, type BenchRepo, type Dag } from './scenario';

const run = promisify(execFile);

/** Runs the baseline on `bench.repo` (a fresh copy of the scenario); returns its wall time in ms. */
export async function runNaiveBaseline(bench: BenchRepo, dag: Dag): Promise<number> {
  const started = Date.now();
  const { repo } = bench;
  const root = path.dirname(repo);
  const integration = path.join(root, 'naive-integration');
  git(repo, 'worktree', 'add', '-q', '-b', 'naive/integration', integration, 'main');
  const order = mergeOrder(
    Object.keys(dag.durations).map((ref) => ({ ref, dependsOn: dag.deps[ref] ?? [] })),
  );
  for (const ref of order) {
    const worktree = path.join(root, `naive-${ref}`);
    const branch = `naive/${ref}`;
    git(repo, 'worktree', 'add', '-q', '-b', branch, worktree, 'naive/integration');
    await run(process.execPath, [TIMED_AGENT], {
      cwd: worktree,
      env: {
        ...process.env,
        ...bench.agentEnv,
        SAGA_ROLE: 'implementer',
        SAGA_TASK_ID: ref,
        SAGA_ATTEMPT: '1',
      },
    });
    await run('sh', ['-c', taskCheck(ref)], { cwd: worktree });
    git(worktree, 'add', '-A');
    git(worktree, 'commit', '-q', '-m', `task ${ref}`);
    git(integration, 'merge', '-q', '--no-ff', '-m', `integrate ${ref}`, branch);
    git(repo, 'worktree', 'remove', worktree);
  }
  await run('sh', ['-c', 'test -d out && test -f README.md'], { cwd: integration });
  git(repo, 'worktree', 'remove', integration);
  return Date.now() - started;
}
