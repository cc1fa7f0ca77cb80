/**
 * The Gitea adapter (src/activities/forge/gitea.ts) and the token-safe push (push.ts) against a REAL Gitea
 * (test/harness/gitea.ts): two stacked branches pushed with the token in git's environment only; find-or-
 * create twice gives one PR; the body is updated in place; CI pending → failure → success from commit
 * statuses; bob's (write) review comment reads with authorCanWrite true, carol's (read) false; a reply
 * lands in bob's thread; a stale head or a draft is not merged, the ready PR is; the clone's .git/config,
 * its history and the push's GIT_TRACE hold no token.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { giteaForge } from '../../../../src/activities/forge/gitea';
import type { Forge, ForgeTarget, PullRequest } from '../../../../src/activities/forge/port';
import { pushBranch } from '../../../../src/activities/forge/push';
import { startGitea, type TestGitea } from '../../../harness/gitea';

const TOKEN_ENV = 'SAGA_TEST_GITEA_TOKEN';
const root = mkdtempSync(path.join(os.tmpdir(), 'saga-gitea-forge-'));
const clone = path.join(root, 'clone');
const traceFile = path.join(root, 'push-trace.log');
let gitea: TestGitea;
let forge: Forge;
let target: ForgeTarget;
let env: NodeJS.ProcessEnv;
const sha: Record<'m1' | 'm2', string> = { m1: '', m2: '' };

function git(args: string[], extraEnv: Record<string, string> = {}): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd: clone,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), GIT_CONFIG_NOSYSTEM: '1', ...extraEnv },
  }).trim();
}

function commitFile(branch: string, from: string, file: string, lines: number): void {
  git(['checkout', '-q', '-b', branch, from]);
  writeFileSync(
    path.join(clone, file),
    Array.from({ length: lines }, (_, i) => `line ${i + 1}`).join('\n') + '\n',
  );
  git(['add', file]);
  git(['commit', '-q', '-m', `${branch}: ${file}`]);
}

/** What the saga will do: ask first, create only when nothing is found. */
async function findOrCreate(head: string, base: string, title: string): Promise<PullRequest> {
  const found = await forge.findPullRequest(head);
  if (found) return found;
  return forge.createPullRequest({ head, base, title, body: `Delivers ${head}`, draft: true });
}

beforeAll(async () => {
  gitea = await startGitea();
  env = { [TOKEN_ENV]: gitea.users.alice.token };
  target = { kind: 'gitea', url: gitea.url, owner: 'alice', repo: 'demo', tokenEnv: TOKEN_ENV };
  forge = giteaForge(target, env);
  execFileSync('git', ['clone', '-q', gitea.repo.cloneUrl, clone], {
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), ...gitea.gitEnv('alice') },
  });
  commitFile('saga/m1', 'main', 'a.txt', 5);
  commitFile('saga/m2', 'saga/m1', 'b.txt', 3);
}, 120_000);

afterAll(async () => {
  await gitea?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('the Gitea forge', () => {
  it('pushes two stacked branches with the token in git’s environment only', async () => {
    for (const branch of ['m1', 'm2'] as const) {
      sha[branch] = await pushBranch({
        repoDir: clone,
        remoteUrl: gitea.repo.cloneUrl,
        branch: `saga/${branch}`,
        tokenEnv: TOKEN_ENV,
        env,
        traceFile,
      });
      expect(sha[branch]).toBe(git(['rev-parse', `saga/${branch}`]));
    }
    const branch = (await gitea.api('alice', 'GET', '/repos/alice/demo/branches/saga%2Fm2')) as {
      commit: { id: string };
    };
    expect(branch.commit.id).toBe(sha.m2);
    await expect(
      pushBranch({
        repoDir: clone,
        remoteUrl: gitea.repo.cloneUrl,
        branch: 'saga/m1',
        tokenEnv: 'NOT_SET',
        env,
      }),
    ).rejects.toThrow(/NOT_SET/);
  });

  it('finds or creates one draft PR per branch, stacked, and updates its body in place', async () => {
    const first = await findOrCreate('saga/m1', 'main', 'M1: a');
    const again = await findOrCreate('saga/m1', 'main', 'M1: a');
    expect(again.number).toBe(first.number);
    expect(first).toMatchObject({
      head: 'saga/m1',
      base: 'main',
      title: 'M1: a',
      draft: true,
      state: 'open',
    });
    expect(first.headSha).toBe(sha.m1);
    const second = await findOrCreate('saga/m2', 'saga/m1', 'M2: b');
    expect(second).toMatchObject({ base: 'saga/m1', draft: true });
    const all = (await gitea.api('alice', 'GET', '/repos/alice/demo/pulls?state=all')) as unknown[];
    expect(all).toHaveLength(2);

    const updated = await forge.updatePullRequest(first.number, { body: '- [x] exit criterion 1' });
    expect(updated).toMatchObject({ number: first.number, body: '- [x] exit criterion 1', draft: true });
    const retitled = await forge.updatePullRequest(first.number, { title: 'M1: a, renamed' });
    expect(retitled).toMatchObject({ title: 'M1: a, renamed', draft: true });
  });

  it('reads CI pending → failure → success from commit statuses; a warning is neutral', async () => {
    await gitea.setStatus(sha.m1, 'pending', 'ci/test', 'running');
    expect(await forge.ciState(sha.m1)).toMatchObject({ state: 'pending' });
    await gitea.setStatus(sha.m1, 'failure', 'ci/test', '2 tests failed', 'http://ci.example.test/1');
    const failed = await forge.ciState(sha.m1);
    expect(failed).toMatchObject({
      sha: sha.m1,
      state: 'failure',
      checks: [
        {
          name: 'ci/test',
          state: 'failure',
          description: '2 tests failed',
          targetUrl: 'http://ci.example.test/1',
        },
      ],
    });
    await gitea.setStatus(sha.m1, 'success', 'ci/test', 'all passed');
    await gitea.setStatus(sha.m1, 'warning', 'ci/lint', 'style notes');
    const green = await forge.ciState(sha.m1);
    expect(green).toMatchObject({ state: 'success' });
    expect(green !== 'not-modified' && green.checks.map((c) => c.state).sort()).toEqual([
      'neutral',
      'success',
    ]);
  });

  it('reads review comments with their authors’ rights and replies in the thread', async () => {
    const pr = (await forge.findPullRequest('saga/m1'))!;
    await gitea.reviewComment('bob', { pr: pr.number, path: 'a.txt', line: 2, body: 'bob: rename this' });
    await gitea.reviewComment('carol', { pr: pr.number, path: 'a.txt', line: 4, body: 'carol: and this' });
    const comments = await forge.reviewComments(pr.number);
    const bob = comments.find((c) => c.author === 'bob')!;
    const carol = comments.find((c) => c.author === 'carol')!;
    expect(bob).toMatchObject({
      authorCanWrite: true,
      isBot: false,
      path: 'a.txt',
      line: 2,
      resolved: false,
    });
    expect(bob.body).toBe('bob: rename this');
    expect(carol).toMatchObject({ authorCanWrite: false, line: 4 });
    expect(carol.threadId).not.toBe(bob.threadId);

    await forge.reply(pr.number, bob, `Fixed in ${sha.m1.slice(0, 7)}`);
    const after = await forge.reviewComments(pr.number);
    const reply = after.find((c) => c.body === `Fixed in ${sha.m1.slice(0, 7)}`);
    expect(reply).toMatchObject({
      author: 'alice',
      authorCanWrite: true,
      threadId: bob.threadId,
      path: 'a.txt',
    });

    // Resolving the conversation resolves every comment of the thread, and nothing of carol's.
    await gitea.api('alice', 'POST', `/repos/alice/demo/pulls/comments/${bob.id}/resolve`);
    const resolved = await forge.reviewComments(pr.number);
    expect(resolved.filter((c) => c.threadId === bob.threadId).map((c) => c.resolved)).toEqual([true, true]);
    expect(resolved.find((c) => c.id === carol.id)?.resolved).toBe(false);
  });

  it('merges only a ready PR at the expected head, through the merge API', async () => {
    const pr = (await forge.findPullRequest('saga/m1'))!;
    const draft = await forge.merge(pr.number, 'merge', sha.m1);
    expect(draft.merged).toBe(false);
    expect(draft.message).toMatch(/work in progress/i);
    const ready = await forge.markReady(pr.number);
    expect(ready).toMatchObject({ draft: false, title: 'M1: a, renamed' });
    const stale = await forge.merge(pr.number, 'merge', sha.m2);
    expect(stale.merged).toBe(false);
    expect(await forge.merge(pr.number, 'merge', sha.m1)).toMatchObject({ merged: true });
    expect(await forge.findPullRequest('saga/m1')).toMatchObject({ number: pr.number, state: 'merged' });

    const next = (await forge.findPullRequest('saga/m2'))!;
    await forge.updatePullRequest(next.number, { base: 'main' });
    await forge.markReady(next.number);
    expect(await forge.merge(next.number, 'merge', sha.m2)).toMatchObject({ merged: true });
  });

  it('says who the token is and whether it may push', async () => {
    expect(await forge.whoAmI()).toEqual({ login: 'alice', canPush: true });
    const carol = giteaForge(target, { [TOKEN_ENV]: gitea.users.carol.token });
    expect(await carol.whoAmI()).toEqual({ login: 'carol', canPush: false });
  });

  it('leaves no token in the clone’s .git/config, its history or the push’s git trace', () => {
    const token = gitea.users.alice.token;
    const config = readFileSync(path.join(clone, '.git', 'config'), 'utf8');
    expect(config).not.toContain(token);
    expect(config).not.toMatch(/\/\/[^/\s]*@/);
    const trace = readFileSync(traceFile, 'utf8');
    // The trace is real: git ran our helper (its text names the variable, never the value) and curl's
    // trace shows the Authorization header redacted.
    expect(trace).toContain('$SAGA_FORGE_TOKEN');
    expect(trace).toMatch(/Authorization: Basic <redacted>/);
    expect(trace).not.toContain(token);
    expect(git(['log', '--all', '-p'])).not.toContain(token);
  });
});
