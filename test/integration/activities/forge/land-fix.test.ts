/**
 * landFix (src/activities/forge/land-fix.ts) through the delivery activities, with the worker's git in a
 * real clone and a REAL Gitea (test/harness/gitea.ts): a fix on m1 fast-forwards m1, is merged up into m2
 * (a merge commit made without checking anything out) and the integration branch (checked out in its
 * worktree, whose files follow), all pushed; a retry changes nothing; a conflicting fix, a fix that did not
 * start from its branch, or a missing token move and push nothing; a retry after a crash between moving
 * and pushing finishes the job; with `pr: single` the integration branch itself is delivered and fixed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createForgeActivities,
  type ForgeActivities,
  type LandFixInput,
} from '../../../../src/activities/forge/delivery-activities';
import {
  deliveryRepo,
  INTEGRATION,
  M1,
  M2,
  sagaPrBody,
  type DeliveryRepo,
} from '../../../harness/delivery-repo';
import { startGitea, type TestGitea } from '../../../harness/gitea';

const TOKEN_ENV = 'SAGA_TEST_LAND_FIX_TOKEN';
const root = mkdtempSync(path.join(os.tmpdir(), 'saga-land-fix-'));
let gitea: TestGitea;
let acts: ForgeActivities;
let clone: DeliveryRepo;
let input: Omit<LandFixInput, 'fixBranch'>;

const heads = () => [M1, M2, INTEGRATION].map((b) => clone.head(b));
const parents = (sha: string) => clone.git(['rev-list', '--parents', '-n', '1', sha]).split(' ').slice(1);

/** A fix branch started from `from` with one commit of `file`. */
function fixBranch(name: string, from: string, file: string, text: string): string {
  clone.git(['branch', name, from]);
  const sha = clone.commit(name, file, text);
  clone.git(['checkout', '-q', 'main']);
  return sha;
}

async function failureOf(
  promise: Promise<unknown>,
): Promise<Error & { type?: string; nonRetryable?: boolean }> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

beforeAll(async () => {
  gitea = await startGitea();
  const env = { [TOKEN_ENV]: gitea.users.alice.token };
  acts = createForgeActivities({ env: () => env });
  clone = deliveryRepo(gitea, root);
  const ref = {
    repo: clone.repo,
    remote: 'origin',
    target: { kind: 'gitea' as const, url: gitea.url, owner: 'alice', repo: 'demo', tokenEnv: TOKEN_ENV },
  };
  const deliver = { ...ref, base: 'main', title: 'greet', body: sagaPrBody(1) };
  const one = await acts.deliverMilestone({ ...deliver, head: M1, headSha: clone.head(M1) });
  const two = await acts.deliverMilestone({ ...deliver, head: M2, headSha: clone.head(M2), base: M1 });
  input = {
    ...ref,
    stack: [one, two].map((pr) => ({ head: pr.head, number: pr.number })),
    at: 0,
    integrationBranch: INTEGRATION,
  };
}, 120_000);

afterAll(async () => {
  await gitea?.stop();
  rmSync(root, { recursive: true, force: true });
});

test('a fix on m1 reaches m2 and the integration branch, all pushed; a retry changes nothing', async () => {
  const m2Before = clone.head(M2);
  const fix = fixBranch('saga/greet/m1-fix', M1, 'a.txt', 'one\n2\nthree\n');
  const landed = await acts.landFix({ ...input, fixBranch: 'saga/greet/m1-fix' });
  expect(landed.commit).toBe(fix);
  const m2 = clone.head(M2);
  expect(parents(m2)).toEqual([m2Before, fix]);
  expect(clone.git(['show', `${m2}:a.txt`])).toBe('one\n2\nthree');
  expect(landed.heads).toEqual({ [M1]: fix, [M2]: m2 });
  expect(heads()).toEqual([fix, m2, m2]);
  // The integration worktree followed its branch: the fix is in its files, nothing left dirty.
  expect(readFileSync(path.join(clone.integrationWorktree, 'a.txt'), 'utf8')).toBe('one\n2\nthree\n');
  expect(clone.git(['status', '--porcelain'], clone.integrationWorktree)).toBe('');
  expect(clone.remoteHeads()).toMatchObject({ [M1]: fix, [M2]: m2 });

  expect(await acts.landFix({ ...input, fixBranch: 'saga/greet/m1-fix' })).toEqual(landed);
  expect(heads()).toEqual([fix, m2, m2]);
});

test('a conflicting fix fails naming the branches and files; nothing moves here or on the forge', async () => {
  fixBranch('saga/greet/m1-clash', M1, 'b.txt', 'not a bee\n');
  const before = { local: heads(), remote: clone.remoteHeads() };
  const failure = await failureOf(acts.landFix({ ...input, fixBranch: 'saga/greet/m1-clash' }));
  expect(failure.message).toContain(`merging '${M1}'`);
  expect(failure.message).toContain(`into '${M2}'`);
  expect(failure.message).toContain('conflicts in b.txt');
  expect(failure).toMatchObject({ type: 'FixConflict', nonRetryable: true });
  expect(heads()).toEqual(before.local);
  expect(clone.remoteHeads()).toEqual(before.remote);

  // A fix that did not start from its delivery branch is refused the same way.
  fixBranch('saga/greet/m1-elsewhere', 'main', 'c.txt', 'sea\n');
  const stray = await failureOf(acts.landFix({ ...input, fixBranch: 'saga/greet/m1-elsewhere' }));
  expect(stray).toMatchObject({ type: 'FixNotOnBranch', nonRetryable: true });
  expect(stray.message).toContain(`does not descend from '${M1}'`);

  // No token: the push could never happen, so nothing is moved to wait for it.
  fixBranch('saga/greet/m1-later', M1, 'a.txt', 'one\n2\n3\n');
  const noToken = createForgeActivities({ env: () => ({}) });
  const missing = await failureOf(noToken.landFix({ ...input, fixBranch: 'saga/greet/m1-later' }));
  expect(missing).toMatchObject({ type: 'ForgeTokenMissing', nonRetryable: true });
  expect(missing.message).toContain(TOKEN_ENV);
  expect(heads()).toEqual(before.local);
  expect(clone.remoteHeads()).toEqual(before.remote);
});

test('a retry after a crash between moving m1 and the rest: m2 and the integration follow, all pushed', async () => {
  const m2Before = clone.head(M2);
  const fix = clone.head('saga/greet/m1-later'); // from the test above: one commit on m1
  // The first attempt fast-forwarded m1 and died before the merges and the pushes.
  clone.git(['update-ref', `refs/heads/${M1}`, fix, clone.head(M1)]);
  const landed = await acts.landFix({ ...input, fixBranch: 'saga/greet/m1-later' });
  expect(landed.commit).toBe(fix);
  const m2 = clone.head(M2);
  expect(parents(m2)).toEqual([m2Before, fix]);
  expect(heads()).toEqual([fix, m2, m2]);
  expect(clone.remoteHeads()).toMatchObject({ [M1]: fix, [M2]: m2 });

  // A fix for the top of the stack moves m2 and the integration branch alone.
  const top = fixBranch('saga/greet/m2-fix', M2, 'b.txt', 'bees\n');
  const again = await acts.landFix({ ...input, at: 1, fixBranch: 'saga/greet/m2-fix' });
  expect(again).toEqual({ heads: { [M2]: top }, commit: top });
  expect(heads()).toEqual([fix, top, top]);
  expect(clone.remoteHeads()).toMatchObject({ [M1]: fix, [M2]: top });
});

test('pr: single: the integration branch, checked out in its worktree, is delivered and a fix lands on it', async () => {
  const single = await acts.deliverMilestone({
    ...input,
    head: INTEGRATION,
    headSha: clone.head(INTEGRATION),
    base: 'main',
    title: 'greet',
    body: sagaPrBody(1),
  });
  expect(single).toMatchObject({ head: INTEGRATION, base: 'main', draft: true });
  const fix = fixBranch('saga/greet/single-fix', INTEGRATION, 'c.txt', 'sea\n');
  const landed = await acts.landFix({
    ...input,
    stack: [{ head: INTEGRATION, number: single.number }],
    at: 0,
    fixBranch: 'saga/greet/single-fix',
  });
  expect(landed).toEqual({ heads: { [INTEGRATION]: fix }, commit: fix });
  expect(readFileSync(path.join(clone.integrationWorktree, 'c.txt'), 'utf8')).toBe('sea\n');
  expect(clone.remoteHeads()[INTEGRATION]).toBe(fix);
});
