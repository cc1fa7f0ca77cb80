/**
 * Planning never touches the user's checkout. Discovery's commands (an `npm test` that
 * writes a marker) and the planner (an agent that writes a file in its working directory) run in a scratch
 * worktree of the base commit; the worktree is removed when planning ends and the main checkout's HEAD and
 * `git status` are the same as before. An `npx X` whose X is not installed is not run.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { respond } from '../../../../src/client/saga-client';
import { createDiscoveryActivities } from '../../../../src/activities/planning/discovery';
import {
  ensurePlanningWorktree,
  finishPlanningWorktree,
} from '../../../../src/activities/planning/planning-worktree';
import { createSampleRepo, greetingPlan } from '../../../../src/demo/sample-repo';
import { phaseWorkflowId, sagaWorkflowId } from '../../../../src/domain/contract/naming';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { PROJECT_ROOT } from '../../../../src/project-root';

const DEMO_AGENT = path.join(PROJECT_ROOT, 'agents', 'demo-agent.js');
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' });
const checkoutState = (repo: string) => ({
  head: git(repo, 'rev-parse', 'HEAD').trim(),
  status: git(repo, 'status', '--porcelain=v1', '--untracked-files=all', '--ignored'),
});

/** The sample repo, with an `npm test` that leaves a marker where it runs, committed. */
function markerRepo(dir: string, configExtra = ''): string {
  const repo = createSampleRepo(dir, {
    script: { planner: { questions: [], plan: greetingPlan() } },
    configExtra,
  });
  writeFileSync(
    path.join(repo, 'package.json'),
    JSON.stringify({
      name: 'marker',
      private: true,
      scripts: { test: `node -e "require('fs').writeFileSync('test-ran-here.txt', 'x')"` },
      devDependencies: { typescript: '*' },
    }),
  );
  writeFileSync(path.join(repo, 'tsconfig.json'), '{}\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'marker test script');
  return repo;
}

describe('planning runs in a scratch worktree, never in the user checkout', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('planning-checkout');
    process.env.SAGA_HOME = env.sagaHome;
    process.env.SAGA_HOST_ID = env.hostId;
    process.env.SAGA_TASK_QUEUE = env.taskQueue;
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  test('discovery and a planner that writes files leave the main checkout as it was', async () => {
    const dir = env.tmp('repo');
    const scribbler = path.join(dir, 'scribbler.js');
    writeFileSync(
      scribbler,
      `'use strict';\nrequire('node:fs').writeFileSync('planner-was-here.txt', process.env.SAGA_ROLE || '');\nrequire(${JSON.stringify(DEMO_AGENT)});\n`,
    );
    const repo = markerRepo(
      path.join(dir, 'greeting'),
      `agents:\n  scribbler:\n    command: ${JSON.stringify(['{node}', scribbler])}\n`,
    );
    const before = checkoutState(repo);

    const input = await prepareSaga({
      repo,
      trustRepoConfig: true,
      argumentsText: 'Add a greeting',
      name: 'scratch-plan',
      agent: 'scribbler',
    });
    await startSaga(env.client, input);
    const answer = (id: string, choice: string) =>
      respond(env.client, input.name, { interactionId: id, choice, user: 'tester' });
    await waitForPending(env, input.name, 'confirm-name');
    await answer('confirm-name', 'confirm');
    await waitForPending(env, input.name, 'plan-approval-1');

    // The planner ran (it wrote its marker) and discovery's `npm test` ran, both in the scratch worktree.
    const scratch = path.join(input.worktreeRoot, 'saga-scratch-plan-planning');
    expect(readFileSync(path.join(scratch, 'planner-was-here.txt'), 'utf8')).toBe('planner');
    expect(existsSync(path.join(scratch, 'test-ran-here.txt'))).toBe(true);
    expect(git(scratch, 'rev-parse', 'HEAD').trim()).toBe(before.head);
    expect(existsSync(path.join(repo, 'planner-was-here.txt'))).toBe(false);
    expect(existsSync(path.join(repo, 'test-ran-here.txt'))).toBe(false);
    expect(checkoutState(repo)).toEqual(before);

    await answer('plan-approval-1', 'approve');
    await waitForStatus(env, input.name, (s) => s.phase === 'implementation');
    const planning = env.client.workflow.getHandle(phaseWorkflowId(input.name, 'planning'));
    expect(await planning.result()).toMatchObject({ approved: true });
    // Planning removed its worktree and checked the main checkout.
    expect(existsSync(scratch)).toBe(false);
    expect(git(repo, 'worktree', 'list', '--porcelain')).not.toContain('saga-scratch-plan-planning');
    const status = await waitForStatus(env, input.name, (s) =>
      s.log.some((l) => /main checkout unchanged/.test(l)),
    );
    expect(status.log.join('\n')).not.toMatch(/main checkout changed/);
    await env.client.workflow.getHandle(sagaWorkflowId(input.name)).cancel();
  }, 90_000);
});

/**
 * The repo's installed node_modules (git-ignored) is lent to the scratch worktree as a
 * copy of its own: a discovery `npm test` that writes into node_modules (a cache, as vite or babel do)
 * passes there, in every sandbox mode, and the user's node_modules is left as it was.
 */
describe("planning's scratch worktree has node_modules of its own", () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('planning-modules');
    process.env.SAGA_HOME = env.sagaHome;
    process.env.SAGA_HOST_ID = env.hostId;
    process.env.SAGA_TASK_QUEUE = env.taskQueue;
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  test.each(['none', 'auto'])(
    "sandbox: %s — a test that writes into node_modules passes, the user's node_modules is untouched",
    async (sandbox) => {
      const repo = createSampleRepo(path.join(env.tmp('repo'), 'modules'), {
        script: { planner: { questions: [], plan: greetingPlan() } },
        configExtra: `sandbox: ${sandbox}\n`,
      });
      const script =
        "const fs = require('fs'); fs.mkdirSync('node_modules/.cache', { recursive: true }); fs.writeFileSync('node_modules/.cache/ran', 'x'); require('dep');";
      writeFileSync(
        path.join(repo, 'package.json'),
        JSON.stringify({ name: 'modules', private: true, scripts: { test: `node -e "${script}"` } }),
      );
      writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'a test that needs an installed package and caches in node_modules');
      mkdirSync(path.join(repo, 'node_modules', 'dep'), { recursive: true });
      writeFileSync(path.join(repo, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
      const before = checkoutState(repo);

      const name = `scratch-modules-${sandbox}`;
      const input = await prepareSaga({ repo, argumentsText: 'Add a greeting', name, trustRepoConfig: true });
      await startSaga(env.client, input);
      await waitForPending(env, name, 'confirm-name');
      await respond(env.client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'tester' });
      await waitForPending(env, name, 'plan-approval-1');

      const testLog = readFileSync(path.join(input.sagaDir, 'runs', 'discovery', 'test.log'), 'utf8');
      expect(testLog).toMatch(/\n# exit 0 /);
      const scratch = path.join(input.worktreeRoot, `saga-${name}-planning`);
      expect(lstatSync(path.join(scratch, 'node_modules')).isDirectory()).toBe(true);
      expect(existsSync(path.join(scratch, 'node_modules', '.cache', 'ran'))).toBe(true);
      expect(existsSync(path.join(repo, 'node_modules', '.cache'))).toBe(false);
      expect(checkoutState(repo)).toEqual(before);
      await env.client.workflow.getHandle(sagaWorkflowId(name)).cancel();
    },
    90_000,
  );
});

describe('discovery does not npx a program that is not installed', () => {
  test('`npx tsc` is recorded as not run when node_modules/.bin/tsc is missing', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'saga-npx-'));
    const repo = markerRepo(path.join(root, 'repo'));
    const worktree = path.join(root, 'scratch');
    const { discoverEnvironment, finishPlanningWorktree } = createDiscoveryActivities();
    const sagaDir = path.join(root, 'saga');
    const found = await discoverEnvironment({ repo, sagaDir, timeoutMs: 60_000, worktree, base: 'main' });
    const typecheck = found.commands.find((c) => c.purpose === 'typecheck');
    expect(typecheck).toMatchObject({ argv: ['npx', 'tsc', '--noEmit'], confirmed: 'not-run' });
    expect(found.notes.join('\n')).toMatch(/tsc is not installed .*npx would download it/);
    expect(found.commands.find((c) => c.purpose === 'test')).toMatchObject({ confirmed: 'passed' });
    expect(existsSync(path.join(worktree, 'test-ran-here.txt'))).toBe(true);
    expect(existsSync(path.join(repo, 'test-ran-here.txt'))).toBe(false);
    // Finishing removes the worktree and reports an unchanged checkout; a change made meanwhile is named.
    writeFileSync(path.join(repo, 'user-edit.txt'), 'mine');
    const finished = await finishPlanningWorktree({ repo, worktree, sagaDir });
    expect(finished).toMatchObject({ removed: true, checkoutUnchanged: false });
    expect(finished.differences.join('\n')).toContain('user-edit.txt');
    expect(existsSync(worktree)).toBe(false);
  }, 60_000);
});

describe("the scratch worktree's node_modules copy", () => {
  test('a retry after a crash mid-copy starts the copy over; an earlier copy is kept', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'saga-modules-'));
    const repo = markerRepo(path.join(root, 'repo'));
    mkdirSync(path.join(repo, 'node_modules', 'dep'), { recursive: true });
    writeFileSync(path.join(repo, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
    const worktree = path.join(root, 'scratch');
    const sagaDir = path.join(root, 'saga');
    const request = { repo, worktree, base: 'main', sagaDir };
    expect(await ensurePlanningWorktree(request)).toEqual({ worktree, created: true });
    // The crash: the copy was half made, never renamed into place.
    rmSync(path.join(worktree, 'node_modules'), { recursive: true });
    mkdirSync(path.join(worktree, 'node_modules.saga-partial', 'half'), { recursive: true });
    expect(await ensurePlanningWorktree(request)).toEqual({ worktree, created: false });
    expect(readdirSync(path.join(worktree, 'node_modules'))).toEqual(['dep']);
    expect(existsSync(path.join(worktree, 'node_modules.saga-partial'))).toBe(false);
    // A copy in place is the worktree's own from then on: a retry does not copy again over it.
    writeFileSync(path.join(worktree, 'node_modules', 'dep', 'index.js'), 'changed in the scratch copy\n');
    await ensurePlanningWorktree(request);
    expect(readFileSync(path.join(worktree, 'node_modules', 'dep', 'index.js'), 'utf8')).toBe(
      'changed in the scratch copy\n',
    );
    expect(readFileSync(path.join(repo, 'node_modules', 'dep', 'index.js'), 'utf8')).toBe(
      'module.exports = 1;\n',
    );
    expect(await finishPlanningWorktree({ repo, worktree, sagaDir })).toMatchObject({ removed: true });
  }, 60_000);
});
