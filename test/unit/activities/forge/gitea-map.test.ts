/**
 * The Gitea adapter's pure translations (src/activities/forge/gitea-map.ts): statuses to checks and a CI
 * state, the draft prefix, which pull belongs to a head, and review comments grouped into threads.
 */
import {
  checkState,
  giteaTitle,
  pickPullForHead,
  stripWipPrefix,
  toCheck,
  toPullRequest,
  toReviewComments,
} from '../../../../src/activities/forge/gitea-map';
import { combinedState } from '../../../../src/domain/delivery/forge-shapes';
import type { GiteaPull, GiteaReviewComment } from '../../../../src/activities/forge/gitea-schemas';

const pull = (over: Partial<GiteaPull> & { number: number; headRef?: string }): GiteaPull => ({
  html_url: `http://gitea.test/o/r/pulls/${over.number}`,
  title: 'M1',
  body: null,
  draft: false,
  state: 'open',
  merged: false,
  head: { ref: over.headRef ?? 'saga/m1', sha: 'abc', repo_id: 1 },
  base: { ref: 'main', sha: 'def', repo_id: 1 },
  ...over,
});

describe('commit statuses', () => {
  it('maps each Gitea state: error is a failure, warning is neutral, skipped stays skipped', () => {
    expect(checkState('pending')).toBe('pending');
    expect(checkState('success')).toBe('success');
    expect(checkState('failure')).toBe('failure');
    expect(checkState('error')).toBe('failure');
    expect(checkState('warning')).toBe('neutral');
    expect(checkState('skipped')).toBe('skipped');
  });

  it('combines: any failure fails, else any pending (or none at all) is pending, else success', () => {
    const check = (status: 'pending' | 'success' | 'failure' | 'error' | 'warning' | 'skipped') =>
      toCheck({ context: status, status, description: null, target_url: null });
    expect(combinedState([check('success'), check('error'), check('pending')])).toBe('failure');
    expect(combinedState([check('success'), check('pending')])).toBe('pending');
    expect(combinedState([])).toBe('pending');
    expect(combinedState([check('success'), check('warning'), check('skipped')])).toBe('success');
  });

  it('keeps the name, description and target URL; a status has no log', () => {
    expect(
      toCheck({ context: 'ci/test', status: 'failure', description: '3 failed', target_url: 'http://ci/1' }),
    ).toEqual({
      name: 'ci/test',
      state: 'failure',
      description: '3 failed',
      targetUrl: 'http://ci/1',
      logExcerpt: null,
    });
  });
});

describe('pull requests', () => {
  it('writes a draft as a WIP: title and reports it as draft with the caller’s title', () => {
    expect(giteaTitle('M1: parser', true)).toBe('WIP: M1: parser');
    expect(giteaTitle('WIP: M1: parser', true)).toBe('WIP: M1: parser');
    expect(giteaTitle('[WIP] M1: parser', false)).toBe('M1: parser');
    expect(stripWipPrefix('wip: x')).toBe('x');
    const pr = toPullRequest(pull({ number: 3, title: 'WIP: M1: parser', draft: true, body: null }));
    expect(pr).toMatchObject({ number: 3, title: 'M1: parser', draft: true, body: '', state: 'open' });
    expect(toPullRequest(pull({ number: 4, state: 'closed', merged: true })).state).toBe('merged');
  });

  it('finds the open pull of a head first, else the newest merged one, never a closed or a fork’s', () => {
    const pulls = [
      pull({ number: 1, state: 'closed', merged: false }),
      pull({ number: 2, state: 'closed', merged: true }),
      pull({ number: 5, state: 'closed', merged: true }),
      pull({ number: 6, headRef: 'saga/m2' }),
      pull({ number: 7, head: { ref: 'saga/m1', sha: 'x', repo_id: 9 } }),
    ];
    expect(pickPullForHead(pulls, 'saga/m1')?.number).toBe(5);
    expect(pickPullForHead([...pulls, pull({ number: 8 })], 'saga/m1')?.number).toBe(8);
    expect(pickPullForHead(pulls, 'saga/m3')).toBeNull();
    expect(pickPullForHead([pull({ number: 1, state: 'closed' })], 'saga/m1')).toBeNull();
  });
});

describe('review comments', () => {
  const comment = (over: Partial<GiteaReviewComment> & { id: number }): GiteaReviewComment => ({
    body: 'fix this',
    path: 'src/a.ts',
    position: 3,
    original_position: 0,
    commit_id: 'abc',
    user: { id: 2, login: 'bob' },
    resolver: null,
    pull_request_review_id: 1,
    ...over,
  });

  it('threads comments by file and line, the first comment naming the thread; resolution is the thread’s', () => {
    const comments = toReviewComments(
      [
        comment({ id: 12, user: { id: 1, login: 'alice' }, resolver: { id: 1, login: 'alice' } }),
        comment({ id: 10 }),
        comment({ id: 11, position: 0, original_position: 7, user: { id: 3, login: 'carol' } }),
        comment({ id: 13, user: { id: -2, login: 'gitea-actions' } }),
      ],
      (login) => login !== 'carol',
    );
    expect(
      comments.map((c) => [c.id, c.threadId, c.author, c.authorCanWrite, c.isBot, c.line, c.resolved]),
    ).toEqual([
      [10, '10', 'bob', true, false, 3, true],
      [11, '11', 'carol', false, false, 7, false],
      [12, '10', 'alice', true, false, 3, true],
      [13, '10', 'gitea-actions', true, true, 3, true],
    ]);
  });
});
