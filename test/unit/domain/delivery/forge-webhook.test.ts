/**
 * Reading forge webhooks (src/domain/delivery/forge-webhook.ts): each event Gitea/Forgejo and GitHub send for
 * CI, reviews and pull requests becomes the ForgeEvent for the saga of its branch; pushes are remembered for
 * Gitea's branchless status events; anything else, or any branch that is not a saga's, is ignored; nothing
 * from the payload but the branch and the sha comes out.
 */
import { sagaNameFromBranch } from '../../../../src/domain/contract/naming';
import { readForgeWebhook } from '../../../../src/domain/delivery/forge-webhook';

const SHA = 'a'.repeat(40);
const OTHER = 'b'.repeat(40);
const HEAD = 'saga/shop-20261206-0900/deliver-m1';
const pr = { pull_request: { head: { ref: HEAD, sha: SHA }, title: 'ignore me', body: 'evil' } };
const signalled = (kind: string) => ({
  action: 'signal',
  saga: 'shop-20261206-0900',
  event: { kind, head: HEAD, sha: SHA },
});

describe('Gitea / Forgejo events (X-Gitea-Event-Type)', () => {
  test.each([
    ['pull_request', 'pull-request'],
    ['pull_request_sync', 'pull-request'],
    ['pull_request_review_approved', 'review'],
    ['pull_request_review_rejected', 'review'],
    ['pull_request_review_comment', 'review'],
    ['pull_request_comment', 'review'],
  ])('%s → %s for the saga of the head branch', (event, kind) => {
    expect(readForgeWebhook('gitea', event, { action: 'opened', ...pr })).toEqual(signalled(kind));
  });

  test('a status names no branch: the bridge is asked to find it by the sha', () => {
    expect(readForgeWebhook('gitea', 'status', { sha: SHA, state: 'failure', context: 'ci' })).toEqual({
      action: 'find-branch',
      sha: SHA,
    });
  });

  test('a push to a saga branch is remembered; other pushes and deletions are ignored', () => {
    expect(readForgeWebhook('gitea', 'push', { ref: `refs/heads/${HEAD}`, after: SHA })).toEqual({
      action: 'remember',
      head: HEAD,
      sha: SHA,
    });
    expect(readForgeWebhook('gitea', 'push', { ref: 'refs/heads/main', after: SHA }).action).toBe('ignore');
    expect(readForgeWebhook('gitea', 'push', { ref: `refs/heads/${HEAD}`, after: '0'.repeat(40) })).toEqual({
      action: 'ignore',
      reason: 'a push without a new commit',
    });
  });

  test('events delivery does not watch are ignored, naming the event', () => {
    expect(readForgeWebhook('gitea', 'issues', pr)).toEqual({
      action: 'ignore',
      reason: "event 'issues' is not one delivery watches",
    });
  });
});

describe('GitHub events (X-GitHub-Event)', () => {
  test.each([
    ['pull_request', 'pull-request'],
    ['pull_request_review', 'review'],
    ['pull_request_review_comment', 'review'],
    ['pull_request_review_thread', 'review'],
  ])('%s → %s', (event, kind) => {
    expect(readForgeWebhook('github', event, pr)).toEqual(signalled(kind));
  });

  test('a status: the saga branch among its branches, the one whose tip is the commit first', () => {
    const branches = [
      { name: 'main', commit: { sha: OTHER } },
      { name: 'saga/shop-20261206-0900/integration', commit: { sha: OTHER } },
      { name: HEAD, commit: { sha: SHA } },
    ];
    expect(readForgeWebhook('github', 'status', { sha: SHA, state: 'failure', branches })).toEqual(
      signalled('ci'),
    );
    expect(readForgeWebhook('github', 'status', { sha: SHA, branches: branches.slice(0, 1) })).toEqual({
      action: 'find-branch',
      sha: SHA,
    });
  });

  test('check_run and check_suite: the head branch of the suite, or of a pull request', () => {
    const run = { check_run: { head_sha: SHA, check_suite: { head_branch: HEAD }, output: { text: 'x' } } };
    expect(readForgeWebhook('github', 'check_run', run)).toEqual(signalled('ci'));
    const viaPr = { check_run: { head_sha: SHA, pull_requests: [{ head: { ref: HEAD } }] } };
    expect(readForgeWebhook('github', 'check_run', viaPr)).toEqual(signalled('ci'));
    const suite = { check_suite: { head_sha: SHA, head_branch: HEAD } };
    expect(readForgeWebhook('github', 'check_suite', suite)).toEqual(signalled('ci'));
    expect(
      readForgeWebhook('github', 'check_suite', { check_suite: { head_sha: SHA, head_branch: 'main' } }),
    ).toEqual({
      action: 'ignore',
      reason: 'not a saga branch',
    });
  });

  test('a ping is ignored', () => {
    expect(readForgeWebhook('github', 'ping', { zen: 'hi' }).action).toBe('ignore');
  });
});

describe('untrusted payloads', () => {
  test.each([
    ['a branch outside saga/', { pull_request: { head: { ref: 'feature/x', sha: SHA } } }],
    [
      'a saga name that is not one',
      { pull_request: { head: { ref: 'saga/Bad_Name/deliver-m1', sha: SHA } } },
    ],
    ['shell text in the branch', { pull_request: { head: { ref: 'saga/shop/$(rm -rf ~)', sha: SHA } } }],
    ['a path climbing out', { pull_request: { head: { ref: 'saga/shop/../../x', sha: SHA } } }],
  ])('%s is ignored', (_what, payload) => {
    expect(readForgeWebhook('gitea', 'pull_request', payload)).toEqual({
      action: 'ignore',
      reason: 'not a saga branch',
    });
  });

  test.each([
    ['a sha that is not hex', { pull_request: { head: { ref: HEAD, sha: 'not-a-sha; echo' } } }],
    ['no head at all', { pull_request: {} }],
    ['not an object', 'text'],
  ])('%s is ignored', (_what, payload) => {
    expect(readForgeWebhook('github', 'pull_request', payload)).toEqual({
      action: 'ignore',
      reason: 'a pull_request event without a pull request head',
    });
  });

  test('a status with a bad sha is ignored', () => {
    expect(readForgeWebhook('gitea', 'status', { sha: 'HEAD' }).action).toBe('ignore');
  });
});

describe('sagaNameFromBranch', () => {
  test.each([
    ['saga/shop/deliver-m1', 'shop'],
    ['refs/heads/saga/shop-2/m1t1-add-cart', 'shop-2'],
    ['saga/a/integration', 'a'],
  ])('%s → %s', (branch, name) => expect(sagaNameFromBranch(branch)).toBe(name));

  test.each([
    'main',
    'saga/shop',
    'saga//x',
    'saga/Shop/x',
    'saga/shop/a..b',
    'saga/shop/a b',
    `saga/s/${'x'.repeat(300)}`,
  ])('%s is no saga branch', (branch) => expect(sagaNameFromBranch(branch)).toBeUndefined());
});
