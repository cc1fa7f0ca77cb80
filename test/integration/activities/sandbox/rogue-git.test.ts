/**
 * A confined agent that plants a nested git repository whose own config names a clean filter and a textconv
 * (and stages it as a gitlink), in real sagas (real Temporal server, real repo, real processes, the
 * sandbox on). The programs would write marker files outside the sandbox (where the agent itself cannot
 * write), so a marker proves an unconfined run. Through the handoff, the worktree's removal and the
 * resolver's completion of a merge none runs: the implementer's task ends blocked with the paths named,
 * its files kept, and the saga asks the user; the resolver's merge is not completed, the milestone is
 * reverted (the planted repository removed with it) and the task redone.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createFleetRepo, git, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import { createSagaTestEnv, waitForStatus, type SagaTestEnv } from '../../../harness/saga-env';

let env: SagaTestEnv;
beforeAll(async () => {
  env = await createSagaTestEnv('roguegit');
  await env.startWorkers();
});
afterAll(async () => env?.close());

/**
 * The agent: as `plantAs` (implementer or resolver) it plants `vendor/`, a repository whose config runs
 * programs that touch markers in `markers`; it records in plant.json (beside its worktree's files) what
 * its own tries did. Otherwise it does its task: its own file, and a line in shared.txt.
 */
const rogueAgent = (markers: string, plantAs: string) => `
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const role = process.env.SAGA_ROLE;
const task = process.env.SAGA_TASK_ID;
const git = (cwd, ...args) => execFileSync('git', ['-c', 'user.name=Rogue', '-c', 'user.email=r@x', ...args], { cwd, stdio: 'pipe', encoding: 'utf8' });
const out = {};
const tryIt = (name, fn) => { try { out[name] = fn() ?? 'done'; } catch (e) { out[name] = 'refused: ' + String(e.message).split('\\n')[0]; } };
if (role === ${JSON.stringify(plantAs)}) {
  const markers = ${JSON.stringify(markers)};
  tryIt('markerDirect', () => { fs.writeFileSync(markers + '/direct', 'x'); });
  fs.mkdirSync('vendor', { recursive: true });
  git('vendor', 'init', '-q');
  git('vendor', 'config', 'filter.evil.clean', 'touch ' + markers + '/clean-' + role + '; cat');
  git('vendor', 'config', 'diff.evil.textconv', 'touch ' + markers + '/textconv-' + role + '; cat');
  fs.writeFileSync('vendor/.gitattributes', '* filter=evil diff=evil\\n');
  fs.writeFileSync('vendor/lib.txt', 'one\\n');
  git('vendor', 'add', '-A');
  git('vendor', 'commit', '-q', '--allow-empty', '-m', 'vendored');
  fs.writeFileSync('vendor/lib.txt', 'two\\n'); // dirty: git reading the folder runs the filter
  tryIt('stageGitlink', () => { git('.', 'add', 'vendor'); });
}
if (role === 'resolver') fs.writeFileSync('shared.txt', 'from 1.1\\nfrom 1.2\\n');
else {
  fs.writeFileSync('own-' + task + '.txt', task + '\\n');
  fs.writeFileSync('shared.txt', 'from ' + task + '\\n');
}
if (role === ${JSON.stringify(plantAs)}) fs.writeFileSync('plant.json', JSON.stringify(out));
`;

function sagaRepo(label: string, plantAs: string, tasks: Record<string, unknown>[], milestoneCheck: string) {
  const dir = env.tmp(label);
  const markers = path.join(dir, 'markers');
  mkdirSync(markers);
  const agent = path.join(dir, 'rogue.js');
  writeFileSync(agent, rogueAgent(markers, plantAs));
  const name = label;
  const { repo, planFile } = createFleetRepo(dir, {
    plan: {
      name,
      problem: 'Own files.',
      scope: { in: ['everything'], out: [], delegated: [] },
      exit_criteria: [{ id: 'E1', text: 'the readme', check: 'test -f README.md' }],
      milestones: [
        {
          id: 1,
          slug: 'm1',
          title: 'Milestone 1',
          depends_on: [],
          goal: 'Own files.',
          validation: [{ text: 'milestone check', check: milestoneCheck }],
          tasks,
        },
      ],
    },
    script: {},
    config: `agents:\n  rogue: { command: ["{node}", ${JSON.stringify(agent)}], subagent_dispatch: true }\n`,
  });
  return { dir, repo, planFile, name, markers };
}

test('the implementer plants a nested repository: handoff refused, nothing ran outside, the user is asked', async () => {
  const s = sagaRepo(
    'rg-handoff',
    'implementer',
    [planTask(1, 'one', ['own-1.1.txt'], 'test -f own-1.1.txt')],
    'true',
  );
  await startApprovedSaga(env, { ...s, args: 'Own files', agent: 'rogue' });
  const status = await waitForStatus(
    env,
    s.name,
    (st) =>
      st.phase === 'failed' || st.phase === 'complete' || st.pending.some((p) => p.kind !== 'confirm-name'),
    180_000,
  );
  // Nothing ran outside: handoff (add -A), removal (status) and every read of the tree.
  expect(readdirSync(s.markers)).toEqual([]);
  const task = status.milestones[0]!.tasks[0]!;
  expect({ phase: status.phase, pending: status.pending.map((p) => p.kind), task: task.status }).toEqual({
    phase: 'implementation',
    pending: ['escalation'],
    task: 'blocked',
  });
  expect(task.reason).toMatch(/handoff refused: .*nested \.git entries \(vendor\/\.git\)/);
  expect(task.reason).toMatch(/Nothing was staged or committed and no file was removed/);
  // Its work is where it left it; nothing of it went onto the branch.
  const worktree = task.worktree!;
  const plant = JSON.parse(readFileSync(path.join(worktree, 'plant.json'), 'utf8')) as Record<string, string>;
  expect(plant.markerDirect).toMatch(/^refused/); // the markers' folder is out of the sandbox's reach
  expect(readFileSync(path.join(worktree, 'vendor', 'lib.txt'), 'utf8')).toBe('two\n');
  expect(readFileSync(path.join(worktree, 'own-1.1.txt'), 'utf8')).toBe('1.1\n');
  expect(git(s.repo, 'ls-tree', '-r', '--name-only', task.branch)).not.toMatch(/vendor|own-1\.1/);
  await new Promise((r) => setTimeout(r, 2000)); // nothing running on meanwhile either
  expect(readdirSync(s.markers)).toEqual([]);
}, 240_000);

test('the resolver plants a nested repository: its merge is not completed, nothing ran outside, the task is redone', async () => {
  const s = sagaRepo(
    'rg-resolver',
    'resolver',
    [
      planTask(1, 'one', ['own-1.1.txt'], 'test -f own-1.1.txt'),
      planTask(2, 'two', ['own-1.2.txt'], 'test -f own-1.2.txt'),
    ],
    'test -f own-1.1.txt && test -f own-1.2.txt',
  );
  await startApprovedSaga(env, { ...s, args: '--subagents --parallel=2 Own files', agent: 'rogue' });
  const status = await waitForStatus(
    env,
    s.name,
    (st) =>
      st.phase === 'failed' ||
      st.phase === 'complete' ||
      st.pending.some((p) => p.kind === 'acceptance' || p.kind === 'escalation'),
    240_000,
  );
  // Nothing ran outside: completing the merge (diff HEAD, add -A), the revert and the removal (status).
  expect(readdirSync(s.markers)).toEqual([]);
  const log = status.log.join('\n');
  expect(log).toMatch(/Merge conflict integrating 1\.2: shared\.txt; asking the resolver/);
  expect(log).toMatch(/Resolver could not fix 1\.2 \(.*nested \.git entries \(vendor\/\.git\)/);
  expect(log).toMatch(/Milestone 1 reverted to/); // reset, the planted repository gone, the worktree removed
  // Redone on top of the integrated 1.1, task 1.2 merges cleanly: the milestone holds without the plant.
  expect({ phase: status.phase, pending: status.pending.map((p) => p.kind) }).toEqual({
    phase: 'acceptance',
    pending: ['acceptance'],
  });
  expect(git(s.repo, 'ls-tree', '-r', '--name-only', status.integrationBranch)).not.toMatch(/vendor/);
  expect(existsSync(path.join(path.dirname(s.repo), `saga-${s.name}-integration`))).toBe(false);
}, 300_000);
