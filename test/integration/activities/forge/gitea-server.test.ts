/**
 * The test Gitea (test/harness/gitea.ts) works for real: it answers its version; alice pushes a branch to
 * alice/demo over HTTP with her token handed to git through a credential helper set in git's environment,
 * and afterwards the clone's .git/config, its remote URL and git's traces hold no token; bob (write) can
 * push, carol (read only) gets a 403; a commit status set as a CI system would reads back as the combined
 * status; a review comment by bob reads back on the PR. Without the binary this FAILS, naming the script.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import {
  GITEA_VERSION,
  giteaBinary,
  startGitea,
  type TestGitea,
  type UserName,
} from '../../../harness/gitea';

const root = mkdtempSync(path.join(os.tmpdir(), 'saga-gitea-test-'));
let gitea: TestGitea;

beforeAll(async () => {
  gitea = await startGitea(); // throws "… run scripts/install-gitea.sh" when the binary is missing
}, 90_000);

afterAll(async () => {
  await gitea?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** The environment git runs in here: none of the test process's GIT_* settings, a fresh HOME. */
function gitEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return { ...env, HOME: path.join(root, 'home'), GIT_CONFIG_NOSYSTEM: '1', ...extra };
}

function git(cwd: string, args: string[], extra: Record<string, string> = {}) {
  const res = spawnSync('git', args, { cwd, env: gitEnv(extra), encoding: 'utf8', timeout: 60_000 });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

function gitOk(cwd: string, args: string[], extra: Record<string, string> = {}): string {
  const res = git(cwd, args, extra);
  if (res.status !== 0) throw new Error(`git ${args.join(' ')} failed (${res.status}): ${res.stderr}`);
  return res.stdout.trim();
}

/** A clone of alice/demo as `as` with one new commit on `branch`; git's traces go to files beside it. */
function cloneAndCommit(as: UserName, branch: string): { clone: string; traces: Record<string, string> } {
  const work = mkdtempSync(path.join(root, `${as}-`));
  const traces = { GIT_TRACE: path.join(work, 'trace.log'), GIT_TRACE_CURL: path.join(work, 'curl.log') };
  const env = { ...gitea.gitEnv(as), ...traces };
  gitOk(work, ['clone', '-q', gitea.repo.cloneUrl, 'demo'], env);
  const clone = path.join(work, 'demo');
  gitOk(clone, ['checkout', '-q', '-b', branch]);
  writeFileSync(path.join(clone, `${as}.txt`), `${as} was here\n`);
  gitOk(clone, ['add', '-A']);
  gitOk(clone, [
    '-c',
    `user.name=${as}`,
    '-c',
    `user.email=${as}@example.test`,
    'commit',
    '-q',
    '-m',
    `${as}'s change`,
  ]);
  return { clone, traces };
}

const VersionSchema = z.object({ version: z.string() });
const BranchSchema = z.object({ name: z.string(), commit: z.object({ id: z.string() }) });
const PullSchema = z.object({ number: z.number(), head: z.object({ sha: z.string() }) });
const ReviewCommentSchema = z.object({
  body: z.string(),
  path: z.string(),
  user: z.object({ login: z.string() }),
});

test('without the binary, the harness fails naming the script that builds it', () => {
  expect(() => giteaBinary(path.join(root, 'no-such-gitea'))).toThrow(
    /is not built .*: run scripts\/install-gitea\.sh$/,
  );
});

test('answers its version, started within seconds', async () => {
  const res = await fetch(`${gitea.apiUrl}/version`, { signal: AbortSignal.timeout(5_000) });
  expect(VersionSchema.parse(await res.json()).version).toBe(GITEA_VERSION);
  expect(gitea.startMs).toBeLessThan(20_000);
});

test('alice pushes a branch with her token from the environment, and no token is left behind', async () => {
  const { clone, traces } = cloneAndCommit('alice', 'saga/alice-branch');
  const pushEnv = {
    ...gitea.gitEnv('alice'),
    GIT_TRACE: traces.GIT_TRACE!,
    GIT_TRACE_CURL: traces.GIT_TRACE_CURL!,
  };
  gitOk(clone, ['push', '-q', 'origin', 'saga/alice-branch'], pushEnv);
  const head = gitOk(clone, ['rev-parse', 'HEAD']);

  const branch = BranchSchema.parse(
    await gitea.api('alice', 'GET', '/repos/alice/demo/branches/saga%2Falice-branch'),
  );
  expect(branch.commit.id).toBe(head);

  const token = gitea.users.alice.token;
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  expect(gitOk(clone, ['remote', 'get-url', 'origin'])).toBe(gitea.repo.cloneUrl);
  const gitConfig = readFileSync(path.join(clone, '.git', 'config'), 'utf8');
  const trace = readFileSync(traces.GIT_TRACE!, 'utf8');
  const curl = readFileSync(traces.GIT_TRACE_CURL!, 'utf8');
  expect(trace).toContain('"password=$SAGA_FORGE_TOKEN"; }; f get'); // the helper ran...
  expect(curl).toContain('Authorization: Basic <redacted>'); // ...and git sent what it printed
  for (const text of [gitConfig, trace, curl]) {
    expect(text).not.toContain(token);
    expect(text).not.toContain(basic);
  }
  expect(existsSync(path.join(root, 'home', '.git-credentials'))).toBe(false);
});

test('bob (write) can push; carol (read only) cannot: git is refused, the API answers 403', async () => {
  const bob = cloneAndCommit('bob', 'saga/bob-branch');
  gitOk(bob.clone, ['push', '-q', 'origin', 'saga/bob-branch'], gitea.gitEnv('bob'));

  // Gitea lets a reader start a push (for AGit's refs/for/...) and declines it in its pre-receive hook.
  const carol = cloneAndCommit('carol', 'saga/carol-branch');
  const refused = git(carol.clone, ['push', 'origin', 'saga/carol-branch'], gitea.gitEnv('carol'));
  expect(refused.status).not.toBe(0);
  expect(refused.stderr).toContain('User permission denied for writing');
  expect(refused.stderr).not.toContain(gitea.users.carol.token);
  await expect(gitea.api('bob', 'GET', '/repos/alice/demo/branches/saga%2Fcarol-branch')).rejects.toThrow(
    /404/,
  );
  // Writing through the API: 403.
  await expect(
    gitea.api('carol', 'POST', '/repos/alice/demo/branches', {
      new_branch_name: 'carol-api',
      old_ref_name: 'main',
    }),
  ).rejects.toThrow(/POST \/repos\/alice\/demo\/branches answered 403/);
});

test('a commit status set as a CI system would reads back as the combined status', async () => {
  const main = BranchSchema.parse(await gitea.api('alice', 'GET', '/repos/alice/demo/branches/main'));
  const sha = main.commit.id;
  await gitea.setStatus(sha, 'pending', 'ci/lint', 'linting', 'http://ci.example.test/lint/1');
  expect((await gitea.combinedStatus(sha)).state).toBe('pending');

  await gitea.setStatus(sha, 'failure', 'ci/test', '3 tests failed', 'http://ci.example.test/test/1');
  await gitea.setStatus(sha, 'success', 'ci/lint', 'clean');
  const combined = await gitea.combinedStatus(sha);
  expect(combined.state).toBe('failure');
  const byContext = Object.fromEntries((combined.statuses ?? []).map((s) => [s.context, s]));
  expect(byContext['ci/test']).toMatchObject({
    status: 'failure',
    description: '3 tests failed',
    target_url: 'http://ci.example.test/test/1',
  });
  expect(byContext['ci/lint']?.status).toBe('success');
});

test("bob's review comment on alice's PR reads back with its path and author", async () => {
  const { clone } = cloneAndCommit('alice', 'saga/review-me');
  gitOk(clone, ['push', '-q', 'origin', 'saga/review-me'], gitea.gitEnv('alice'));
  const pr = PullSchema.parse(
    await gitea.api('alice', 'POST', '/repos/alice/demo/pulls', {
      head: 'saga/review-me',
      base: 'main',
      title: 'Review me',
      body: 'A change to review',
    }),
  );
  const review = await gitea.reviewComment('bob', {
    pr: pr.number,
    path: 'alice.txt',
    line: 1,
    body: 'Say more',
  });
  expect(review.user.login).toBe('bob');
  const comments = z
    .array(ReviewCommentSchema)
    .parse(
      await gitea.api('alice', 'GET', `/repos/alice/demo/pulls/${pr.number}/reviews/${review.id}/comments`),
    );
  expect(comments).toEqual([
    expect.objectContaining({ body: 'Say more', path: 'alice.txt', user: { login: 'bob' } }),
  ]);
});
