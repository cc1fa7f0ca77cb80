/**
 * What Temporal does with a delivery activity's failure (delivery-failure.ts): a forge that is down, slow
 * or rate-limiting is retried; a refusal (401, 403, 404, 422) and a push the forge rejects fail at once
 * with the forge's message. And a bad input is refused before any call, naming what is wrong.
 */
import { ApplicationFailure } from '@temporalio/common';
import { createForgeActivities } from '../../../../src/activities/forge/delivery-activities';
import { deliveryFailure } from '../../../../src/activities/forge/delivery-failure';
import { ForgeCallError } from '../../../../src/activities/forge/forge-error';
import { GitError } from '../../../../src/activities/git-ops/run';

const failureOf = (error: unknown) => deliveryFailure('lookAtPullRequests', error) as ApplicationFailure;

test.each([
  [null, 'GitHub read pull request (GET /repos/o/r/pulls/1): no answer within 15000 ms'],
  [502, 'Gitea call failed: HTTP 502: bad gateway'],
  [429, 'GitHub read commit status failed: 429 slow down'],
  [403, 'GitHub read commit status failed: 403 API rate limit exceeded for user ID 1.'],
  [200, 'GitHub read review threads failed: 200 API rate limit already exceeded (RATE_LIMITED)'],
])('a forge that may answer later (%s) is retried', (status, message) => {
  const failure = failureOf(new ForgeCallError('read', status, message));
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure).toMatchObject({ nonRetryable: false, type: 'ForgeUnavailable' });
  expect(failure.message).toBe(`lookAtPullRequests: ${message}`);
});

test.each([
  [
    401,
    'ForgeUnauthorized',
    'GitHub read authenticated user (GET /user) failed: 401 Requires authentication',
  ],
  [
    403,
    'ForgeForbidden',
    'Gitea call failed: HTTP 403: token does not have at least one of required scope(s)',
  ],
  [404, 'ForgeNotFound', 'GitHub update pull request (PATCH /repos/o/r/pulls/99) failed: 404 Not Found'],
  [422, 'ForgeRefused', 'GitHub create pull request failed: 422 Validation Failed'],
])('a refusal (%s) fails at once with the forge’s message', (status, type, message) => {
  expect(failureOf(new ForgeCallError('call', status, message))).toMatchObject({
    nonRetryable: true,
    type,
    message: `lookAtPullRequests: ${message}`,
  });
});

test('a missing token and a rejected push fail at once; a push that met a network fault is retried', () => {
  expect(failureOf(new ForgeCallError('token', null, 'set SAGA_T'))).toMatchObject({
    nonRetryable: true,
    type: 'ForgeTokenMissing',
  });
  const push = (stderr: string) => new GitError(['push', '--porcelain', 'http://h/o/r.git'], '/r', 1, stderr);
  const rejected = push(' ! [rejected] abc -> saga/x/deliver-m1 (non-fast-forward)');
  expect(failureOf(rejected)).toMatchObject({ nonRetryable: true, type: 'ForgePushRefused' });
  expect(failureOf(push("fatal: Authentication failed for 'http://h/o/r.git/'"))).toMatchObject({
    nonRetryable: true,
  });
  const offline = push("fatal: unable to access 'http://h/o/r.git/': Could not resolve host: h");
  expect(failureOf(offline)).toBe(offline);
  const nonRetryable = ApplicationFailure.nonRetryable('as it was', 'FixConflict');
  expect(failureOf(nonRetryable)).toBe(nonRetryable);
});

describe('a bad input is refused before any call, naming what is wrong', () => {
  const acts = createForgeActivities({
    env: () => ({}),
    forgeFor: () => {
      throw new Error('no forge may be reached with a bad input');
    },
  });
  const target = { kind: 'gitea' as const, url: 'http://127.0.0.1:9', owner: 'o', repo: 'r', tokenEnv: 'T' };
  const sha = 'a'.repeat(40);

  test('landFix may move only the saga’s branches, and `at` must be in the stack', async () => {
    const input = {
      repo: '/nonexistent',
      remote: 'origin',
      target,
      fixBranch: 'saga/x/fix',
      stack: [{ head: 'main', number: 1 }],
      at: 0,
      integrationBranch: 'saga/x/integration',
    };
    await expect(acts.landFix(input)).rejects.toMatchObject({
      type: 'InvalidInput',
      nonRetryable: true,
      message: expect.stringContaining("stack head 'main' is not a saga branch"),
    });
    const past = { ...input, stack: [{ head: 'saga/x/deliver-m1', number: 1 }], at: 1 };
    await expect(acts.landFix(past)).rejects.toThrow(/at 1 is past the stack's top/);
  });

  test('lookAtPullRequests, mergePullRequests and deliverMilestone check numbers, shas and branches', async () => {
    await expect(
      acts.lookAtPullRequests({ target, prs: [{ number: 1, headSha: 'HEAD', etag: null }] }),
    ).rejects.toThrow(/headSha must be a full commit sha/);
    await expect(
      acts.mergePullRequests({
        target,
        prs: [{ number: 0, base: 'main', headSha: sha }],
        baseBranch: 'main',
        method: 'merge',
      }),
    ).rejects.toThrow(/a pull request number is positive/);
    const deliver = {
      repo: '/r',
      remote: 'origin',
      target,
      headSha: sha,
      base: 'main',
      title: 't',
      body: '',
    };
    await expect(acts.deliverMilestone({ ...deliver, head: 'main' })).rejects.toThrow(
      /head 'main' is not a saga branch/,
    );
    await expect(
      acts.deliverMilestone({ ...deliver, head: 'saga/x/deliver-m1', remote: '--upload-pack=x' }),
    ).rejects.toThrow(/remote must not start with '-'/);
  });
});
