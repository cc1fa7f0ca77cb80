/**
 * The Linear tracker adapter against Linear itself, opt-in: SAGA_LIVE_LINEAR_KEY (a personal API key) and
 * SAGA_LIVE_LINEAR_ISSUE=TEAM-N (an issue the key may comment on). It reads the issue, writes one workpad
 * comment, finds it by its marker, edits it, reads the edit back, and deletes the comment again. Without
 * them it is skipped, saying why (the only skip allowed).
 */
import { LinearClient } from '@linear/sdk';
import { createLinearTracker } from '../../../../src/activities/tracker/linear';
import { DEFAULT_LINEAR_API } from '../../../../src/domain/config/intake-keys';
import { parseTrackerRef } from '../../../../src/domain/tracker/tracker-ref';
import { WORKPAD_MARKER } from '../../../../src/domain/tracker/workpad';

const key = process.env.SAGA_LIVE_LINEAR_KEY;
const parsed = parseTrackerRef(`linear:${process.env.SAGA_LIVE_LINEAR_ISSUE ?? ''}`);
const live = key && parsed.ok ? parsed.value : undefined;
if (!live) {
  console.log(
    'linear-tracker live test skipped: set SAGA_LIVE_LINEAR_KEY (a Linear API key) and ' +
      'SAGA_LIVE_LINEAR_ISSUE=TEAM-N (an issue it may comment on) to run the Linear adapter against Linear.',
  );
}

(live ? describe : describe.skip)('live Linear (opt-in)', () => {
  test('reads the issue, then writes, finds and edits one workpad comment', async () => {
    const ref = live!;
    const url = process.env.SAGA_LIVE_LINEAR_URL ?? DEFAULT_LINEAR_API;
    const tracker = createLinearTracker(
      { kind: 'linear', url, tokenEnv: 'SAGA_LIVE_LINEAR_KEY' },
      process.env,
    );
    const me = await tracker.whoAmI();
    expect(me.login).toMatch(/\S/);
    const issue = await tracker.issue(ref);
    expect(issue.title).toMatch(/\S/);
    expect(issue.url).toMatch(/^https:\/\//);
    const marker = `${WORKPAD_MARKER}<!-- live ${Date.now()} -->`;
    const id = await tracker.createComment(ref, `${marker}\nsaga live test: planning`);
    try {
      // Linear keeps markdown, but whether it keeps an HTML comment is what this checks.
      expect(await tracker.findComment(ref, marker)).toBe(id);
      await tracker.editComment(ref, id, `${marker}\nsaga live test: edited`);
      const after = await tracker.issue(ref);
      expect(after.comments.filter((c) => c.id === id).map((c) => c.body)).toEqual([
        expect.stringContaining('saga live test: edited'),
      ]);
      const replies = await tracker.commentsAfter(ref, null);
      expect(replies.find((r) => r.id === id)).toMatchObject({ author: me.login });
    } finally {
      await new LinearClient({ apiKey: key!, apiUrl: url }).deleteComment(id);
    }
  });
});
