/**
 * The GitHub tracker adapter against GitHub itself, opt-in: SAGA_GITHUB_LIVE_ISSUE=owner/repo#N (an issue
 * the token may comment on) and GITHUB_TOKEN; GitHub Enterprise through SAGA_GITHUB_LIVE_URL=https://HOST/api/v3.
 * It reads the issue, writes one workpad comment, finds it by its marker, edits it, reads the edit back, and
 * deletes the comment again. Without them it is skipped, saying why (the only skip allowed).
 */
import { createGithubTracker } from '../../../../src/activities/tracker/github';
import { parseTrackerRef } from '../../../../src/domain/tracker/tracker-ref';
import { WORKPAD_MARKER } from '../../../../src/domain/tracker/workpad';

const token = process.env.GITHUB_TOKEN;
const parsed = parseTrackerRef(`github:${process.env.SAGA_GITHUB_LIVE_ISSUE ?? ''}`);
const live = token && parsed.ok && parsed.value.kind === 'github' ? parsed.value : undefined;
if (!live) {
  console.log(
    'github-tracker live test skipped: set SAGA_GITHUB_LIVE_ISSUE=owner/repo#N (an issue the token may comment ' +
      'on) and GITHUB_TOKEN to run the GitHub tracker adapter against GitHub.',
  );
}

(live ? describe : describe.skip)('live GitHub tracker (opt-in)', () => {
  test('reads the issue, then writes, finds and edits one workpad comment', async () => {
    const ref = live!;
    const url = process.env.SAGA_GITHUB_LIVE_URL ?? 'https://api.github.com';
    const tracker = createGithubTracker({ kind: 'github', url, tokenEnv: 'GITHUB_TOKEN' }, process.env);
    const me = await tracker.whoAmI();
    expect(me.login).toMatch(/\S/);
    const issue = await tracker.issue(ref);
    expect(issue.ref).toEqual(ref);
    expect(issue.title).toMatch(/\S/);
    expect(issue.url).toMatch(/^https:\/\/.*\/issues\/\d+$/);
    const marker = `${WORKPAD_MARKER}<!-- live ${Date.now()} -->`;
    const id = await tracker.createComment(ref, `${marker}\nsaga live test: planning`);
    try {
      expect(await tracker.findComment(ref, marker)).toBe(id);
      await tracker.editComment(ref, id, `${marker}\nsaga live test: edited`);
      const after = await tracker.issue(ref);
      expect(after.comments.filter((c) => c.id === id).map((c) => c.body)).toEqual([
        expect.stringContaining('saga live test: edited'),
      ]);
      const replies = await tracker.commentsAfter(ref, null);
      expect(replies.find((r) => r.id === id)).toMatchObject({ author: me.login });
    } finally {
      // The port has no delete (a saga never deletes): the comment goes through the REST API directly.
      await fetch(`${url}/repos/${ref.owner}/${ref.repo}/issues/comments/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}`, accept: 'application/vnd.github+json' },
      });
    }
  });
});
