import type { ReviewComment } from '../../../../src/domain/delivery/forge-shapes';
import {
  fixedReply,
  reviewFixRequest,
  sortReviewComments,
} from '../../../../src/domain/delivery/review-fixes';

const comment = (id: number, over: Partial<ReviewComment> = {}): ReviewComment => ({
  id,
  threadId: String(id),
  author: 'bob',
  authorCanWrite: true,
  isBot: false,
  path: 'src/greet.ts',
  line: 3,
  body: 'Use the name, not "world".',
  commitSha: 'abcdef0123456789',
  resolved: false,
  ...over,
});

describe('review comments on a saga PR', () => {
  test('a writer’s unresolved comment is acted on; others are listed with the reason, or dropped', () => {
    const sorted = sortReviewComments(
      [
        comment(1),
        comment(2, { author: 'carol', authorCanWrite: false }),
        comment(3, { author: 'ci-bot', isBot: true }),
        comment(4, { resolved: true }),
        comment(5),
      ],
      { reviewBots: 'list', handled: [5] },
    );
    expect(sorted.act.map((c) => c.id)).toEqual([1]);
    expect(sorted.listed.map((l) => [l.comment.id, l.why])).toEqual([
      [2, 'no write access'],
      [3, 'from a bot'],
    ]);
  });

  test("the saga's own replies (by the token's user, who can write) are never acted on nor listed", () => {
    const sorted = sortReviewComments([comment(6, { body: fixedReply('0123456789abcdef0') }), comment(7)], {
      reviewBots: 'list',
      handled: [],
    });
    expect(sorted.act.map((c) => c.id)).toEqual([7]);
    expect(sorted.listed).toEqual([]);
  });

  test('review_bots: act acts on a bot with write access', () => {
    const sorted = sortReviewComments([comment(3, { isBot: true })], { reviewBots: 'act', handled: [] });
    expect(sorted.act.map((c) => c.id)).toEqual([3]);
  });

  test('the fix request is `path:line — comment` on its commit, without terminal controls', () => {
    const text = reviewFixRequest(comment(1, { body: 'Rename it\u001b]0;pwned\u0007 please' }));
    expect(text).toContain('src/greet.ts:3 — Rename it');
    expect(text).toContain('(commit abcdef012345)');
    expect(text).not.toContain('\u001b');
    expect(text).not.toContain('\u0007');
    expect(fixedReply('0123456789abcdef0')).toBe(
      "Addressed in 0123456789ab by the saga's fix task.\n\n<!-- saga:reply -->",
    );
  });
});
