/**
 * The handoff (docs/PROCEDURE.md §3.8) commits only on the task branch, never a `worktree.copy` file nor
 * more than the configured limits, runs the user's commit hooks, keeps activity results small; plans refuse
 * long slugs and a task that changed files outside its `owns` gets a warning. Real git repos, real agent
 * processes and a real Temporal server for the task workflow runs.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createGitActivities, createTaskGitActivities } from '../../../../src/activities/git';
import { parseSagaConfigText } from '../../../../src/domain/config/config-text';
import { taskWorkflowId } from '../../../../src/domain/contract/naming';
import { filesOutsideOwns, ownsWarning, PlanSchema } from '../../../../src/domain/plan';
import { parsePlanText } from '../../../../src/domain/plan/parse-text';
import { createSampleRepo, greetingPlan } from '../../../../src/demo/sample-repo';
import { taskWorkflow, type TaskReport } from '../../../../src/workflows/task/task';
import { createSagaTestEnv, type SagaTestEnv } from '../../../harness/saga-env';
import { standaloneTaskInput } from '../../../harness/task-input';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

const GREET_OK = `'use strict';\nmodule.exports = { greet: (name = 'world') => \`Hello, \${name}!\` };\n`;
const GREET_TEST = `const test = require('node:test');\nconst assert = require('node:assert');\nconst { greet } = require('../src/greet');\ntest('greets by name', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));\n`;

let env: SagaTestEnv;
beforeAll(async () => {
  env = await createSagaTestEnv('handoff');
  await env.startWorkers();
});
afterAll(async () => env.close());

/** A sample repo whose task 1.1 agent is `agentSource` (node), with `.env` git-ignored and present. */
function repoWithAgent(label: string, agentSource: string, config = ''): string {
  const dir = env.tmp(label);
  const agent = path.join(dir, 'agent.js');
  writeFileSync(agent, agentSource);
  const repo = createSampleRepo(path.join(dir, 'greeting'));
  writeFileSync(
    path.join(repo, 'saga.config.yaml'),
    `default_agent: mine\nattempts: 1\nagents:\n  mine:\n    command: ["{node}", ${JSON.stringify(agent)}]\n${config}`,
  );
  writeFileSync(path.join(repo, '.gitignore'), '.env\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'test config');
  writeFileSync(path.join(repo, '.env'), 'SECRET=abc\n');
  return repo;
}

/** Agent source: runs the git commands, then writes the passing greet() and its test. */
const agentThat = (gitCommands: string[][], extra = '') => `
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const run = (args) => execFileSync('git', ['-c', 'user.name=Agent', '-c', 'user.email=a@x', ...args], { stdio: 'inherit' });
for (const args of ${JSON.stringify(gitCommands)}) run(args);
${extra}
fs.mkdirSync('src', { recursive: true });
fs.mkdirSync('test', { recursive: true });
fs.writeFileSync('src/greet.js', ${JSON.stringify(GREET_OK)});
fs.writeFileSync('test/greet.test.js', ${JSON.stringify(GREET_TEST)});
`;

async function startTask(repo: string, name: string) {
  const plan = PlanSchema.parse(greetingPlan());
  const input = await standaloneTaskInput(env, {
    name,
    repo,
    spec: plan.milestones[0]!.tasks[0]!,
    goal: 'Add a greeting',
    portBase: 21_300,
  });
  const handle = await env.client.workflow.start(taskWorkflow, {
    taskQueue: env.taskQueue,
    workflowId: taskWorkflowId(name, 1, 1),
    args: [input],
  });
  return { handle, input };
}

describe('item 1: the handoff commits on the task branch only', () => {
  test('an agent that checks out main: its work ends up on the task branch, main is unchanged', async () => {
    // Unconfined (`sandbox: none`): confined, its git could not leave the branch at all (test/rogue-agent).
    const repo = repoWithAgent('checkout-main', agentThat([['checkout', '-q', 'main']]), 'sandbox: none\n');
    // The user's checkout stands on another branch, so nothing stops `git checkout main` in the worktree.
    git(repo, 'checkout', '-q', '-b', 'elsewhere');
    const mainBefore = git(repo, 'rev-parse', 'main');
    const { handle, input } = await startTask(repo, 'ho-main');
    const report: TaskReport = await handle.result();

    expect(report.status).toBe('passed');
    expect(git(repo, 'rev-parse', 'main')).toBe(mainBefore);
    expect(git(repo, 'rev-parse', input.branch)).toBe(report.commit);
    expect(git(repo, 'show', `${input.branch}:src/greet.js`)).toBe(GREET_OK.trim());
    expect(report.changedFiles.sort()).toEqual(['src/greet.js', 'test/greet.test.js']);
    expect(existsSync(input.worktree)).toBe(false);
    expect(git(repo, 'for-each-ref', 'refs/saga-archive')).toBe(''); // nothing left parked
  });

  test('an agent that detaches HEAD and commits there: the commit and the rest are on the task branch', async () => {
    const repo = repoWithAgent(
      'detach',
      agentThat(
        [['checkout', '-q', '--detach']],
        `fs.writeFileSync('NOTES.md', 'detached work\\n');\nrun(['add', 'NOTES.md']);\nrun(['commit', '-q', '-m', 'agent commit on a detached HEAD']);`,
      ),
      'sandbox: none\n',
    );
    const mainBefore = git(repo, 'rev-parse', 'main');
    const { handle, input } = await startTask(repo, 'ho-detach');
    const report: TaskReport = await handle.result();

    expect(report.status).toBe('passed');
    expect(git(repo, 'rev-parse', 'main')).toBe(mainBefore);
    expect(git(repo, 'rev-parse', input.branch)).toBe(report.commit);
    expect(git(repo, 'show', `${input.branch}:NOTES.md`)).toBe('detached work');
    expect(git(repo, 'show', `${input.branch}:src/greet.js`)).toBe(GREET_OK.trim());
    expect(git(repo, 'log', '--format=%s', input.branch)).toContain('agent commit on a detached HEAD');
  });
});

describe('item 7: bounded payloads', () => {
  const manyFiles = `fs.mkdirSync('generated', { recursive: true });\nfor (let i = 0; i < 20000; i++) fs.writeFileSync('generated/f' + i + '-' + 'x'.repeat(60) + '.txt', '');`;

  test('20,000 unignored files: the attempt fails with the reason (max_files), not retried', async () => {
    const repo = repoWithAgent('many-capped', agentThat([], manyFiles));
    const { handle } = await startTask(repo, 'ho-many');
    const error = await handle.result().then(
      () => null,
      (e: Error) => e,
    );
    expect(error).not.toBeNull();
    const chain: string[] = [];
    for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) chain.push((e as Error).message);
    expect(chain.join('\n')).toMatch(/would commit 20002 files \(handoff\.max_files is 2000\)/);
    const history = await handle.fetchHistory();
    const attempts = history.events!.filter((e) => e.activityTaskStartedEventAttributes);
    expect(attempts.every((e) => (e.activityTaskStartedEventAttributes!.attempt ?? 1) === 1)).toBe(true);
    expect(JSON.stringify(history).length).toBeLessThan(200_000);
  }, 120_000);

  test('20,000 files within a raised cap: the result lists 200 paths and the count', async () => {
    const repo = repoWithAgent('many-allowed', agentThat([], manyFiles), 'handoff: { max_files: 30000 }\n');
    const { handle } = await startTask(repo, 'ho-many-ok');
    const report: TaskReport = await handle.result();
    expect(report.status).toBe('passed');
    expect(report.changedFiles).toHaveLength(200);
    const history = await handle.fetchHistory();
    expect(JSON.stringify(history).length).toBeLessThan(200_000);
  }, 120_000);
});

describe('item 2: copied files, limits and hooks', () => {
  let repo: string;
  let worktree: string;
  const gitActivities = () => createGitActivities({ sagaHome: env.sagaHome });
  const taskGit = () => createTaskGitActivities({ git: gitActivities() });
  const branch = 'saga/ho/m1t1-x';

  beforeEach(async () => {
    const dir = env.tmp('direct');
    repo = path.join(dir, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(repo, '.gitignore'), '.env\nsecrets/\n');
    writeFileSync(path.join(repo, 'README.md'), 'hi\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'init');
    writeFileSync(path.join(repo, '.env'), 'SECRET=abc\n');
    worktree = path.join(dir, 'wt');
  });

  const prepare = (copyFiles: string[]) =>
    gitActivities().prepareWorktree({ repo, branch, worktree, base: 'main', copyFiles });
  const handoff = (more: Partial<Parameters<ReturnType<typeof taskGit>['handoffTask']>[0]> = {}) =>
    taskGit().handoffTask({ repo, worktree, message: 'handoff', branch, excludePaths: ['.env'], ...more });

  test('a worktree.copy entry that is not git-ignored is refused, naming the file', async () => {
    writeFileSync(path.join(repo, 'config.local'), 'TOKEN=1\n');
    await expect(prepare(['.env', 'config.local'])).rejects.toMatchObject({
      type: 'CopyNotIgnored',
      nonRetryable: true,
      message: expect.stringContaining("'config.local' is not git-ignored"),
    });
  });

  test('a copied, git-ignored file stays out of the commit and does not keep the worktree', async () => {
    await prepare(['.env']);
    writeFileSync(path.join(worktree, 'work.txt'), 'done\n');
    const out = await handoff();
    expect(out).toMatchObject({ committed: true, removed: true, changedFiles: ['work.txt'] });
  });

  test('the handoff never commits a copied file, even when the agent un-ignores it', async () => {
    await prepare(['.env']);
    writeFileSync(path.join(worktree, '.gitignore'), ''); // the agent drops the ignore rule
    writeFileSync(path.join(worktree, 'work.txt'), 'done\n');
    const out = await handoff();
    expect(out.committed).toBe(true);
    expect(git(repo, 'ls-tree', '-r', '--name-only', branch)).not.toMatch(/^\.env$/m);
    expect(git(repo, 'show', `${branch}:work.txt`)).toBe('done');
  });

  test('a force-added copied file is taken out of the handoff commit', async () => {
    await prepare(['.env']);
    git(worktree, 'add', '-f', '.env');
    writeFileSync(path.join(worktree, 'work.txt'), 'done\n');
    await handoff({ excludePaths: ['.env'], settings: undefined, message: 'h' });
    expect(git(repo, 'ls-tree', '-r', '--name-only', branch)).not.toMatch(/^\.env$/m);
  });

  test('more files than handoff.max_files: refused with the reason, nothing committed', async () => {
    await prepare([]);
    for (let i = 0; i < 12; i++) writeFileSync(path.join(worktree, `f${i}.txt`), `${i}\n`);
    const before = git(repo, 'rev-parse', branch);
    await expect(
      handoff({ settings: { maxFiles: 10, maxFileBytes: 1024, skipHooks: false } }),
    ).rejects.toMatchObject({
      type: 'HandoffTooLarge',
      nonRetryable: true,
      message: expect.stringContaining('12 files (handoff.max_files is 10)'),
    });
    expect(git(repo, 'rev-parse', branch)).toBe(before);
    expect(existsSync(worktree)).toBe(true); // kept for the user, as the agent left it
  });

  test('a file over handoff.max_file_bytes: refused naming it', async () => {
    await prepare([]);
    writeFileSync(path.join(worktree, 'big.bin'), Buffer.alloc(5000));
    await expect(
      handoff({ settings: { maxFiles: 10, maxFileBytes: 4096, skipHooks: false } }),
    ).rejects.toMatchObject({
      type: 'HandoffTooLarge',
      message: expect.stringContaining('big.bin (5000 bytes)'),
    });
  });

  test('deleting a file over handoff.max_file_bytes is not refused: only written content counts', async () => {
    writeFileSync(path.join(repo, 'old.bin'), Buffer.alloc(5000));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'a large file');
    await prepare([]);
    rmSync(path.join(worktree, 'old.bin'));
    writeFileSync(path.join(worktree, 'work.txt'), 'done\n');
    const out = await handoff({ settings: { maxFiles: 10, maxFileBytes: 4096, skipHooks: false } });
    expect(out).toMatchObject({ committed: true, removed: true, changedFileCount: 2 });
    expect([...out.changedFiles].sort()).toEqual(['old.bin', 'work.txt']);
    expect(out.commit).toBe(git(repo, 'rev-parse', branch));
    expect(git(repo, 'ls-tree', '-r', '--name-only', branch)).not.toMatch(/^old\.bin$/m);
  });

  test("with handoff.run_hooks the user's pre-commit hook runs confined (and can refuse); by default it does not", async () => {
    await prepare([]);
    const hook = path.join(repo, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, '#!/bin/sh\necho "secret scanner: found a key" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    writeFileSync(path.join(worktree, 'work.txt'), 'done\n');
    const before = git(repo, 'rev-parse', branch);
    await expect(
      handoff({ settings: { maxFiles: 10, maxFileBytes: 4096, skipHooks: false } }),
    ).rejects.toMatchObject({
      type: 'CommitRefused',
      nonRetryable: true,
      message: expect.stringContaining('secret scanner: found a key'),
    });
    expect(git(repo, 'rev-parse', branch)).toBe(before);
    const out = await handoff(); // the default: the worker's git runs no hook at all
    expect(out.committed).toBe(true);
    expect(git(repo, 'show', `${branch}:work.txt`)).toBe('done');
  });

  test('the handoff settings parse from saga.config.yaml, with clear errors', () => {
    const ok = parseSagaConfigText(
      'handoff: { max_files: 50, max_file_bytes: 1MB, run_hooks: true }',
      'c.yaml',
    );
    expect(ok).toMatchObject({ ok: true, config: { handoff: { max_files: 50, run_hooks: true } } });
    const defaults = parseSagaConfigText('', 'c.yaml');
    expect(defaults).toMatchObject({ ok: true, config: { handoff: { max_files: 2000, run_hooks: false } } });
    // Before run_hooks: still accepted (hooks run only when run_hooks says so).
    expect(parseSagaConfigText('handoff: { skip_hooks: true }', 'c.yaml')).toMatchObject({ ok: true });
    expect(parseSagaConfigText('handoff: { max_file_bytes: lots }', 'c.yaml')).toEqual({
      ok: false,
      errors: [expect.stringMatching(/^c\.yaml: handoff\.max_file_bytes: Invalid size 'lots'/)],
    });
  });
});

describe('item 9: plan validation', () => {
  const planWithSlug = (slug: string) => {
    const plan = PlanSchema.parse(greetingPlan());
    plan.milestones[0]!.tasks[0]!.slug = slug;
    return JSON.stringify(plan);
  };

  test('a slug over 40 characters is an error naming its path', () => {
    const long = 'a'.repeat(41);
    const result = parsePlanText(planWithSlug(long), 'plan.json');
    expect(result).toEqual({
      ok: false,
      errors: [`plan.json: milestones[0].tasks[0].slug: expected at most 40 characters, got 41 ("${long}")`],
    });
    expect(parsePlanText(planWithSlug('a'.repeat(40)), 'plan.json').ok).toBe(true);
  });

  test('files changed outside owns give a warning line', () => {
    const owns = ['src/greet.js', 'test/**'];
    expect(filesOutsideOwns(owns, ['src/greet.js', 'test/a/b.js', 'package.json'])).toEqual(['package.json']);
    expect(ownsWarning('1.1', owns, ['src/greet.js'])).toBeNull();
    expect(ownsWarning('1.1', owns, ['package.json', 'src/other.js'])).toBe(
      'Warning: task 1.1 changed files outside its owns: package.json, src/other.js',
    );
  });
});
