import type { PullRequestStatus } from '../../../../src/domain/contract/state';
import { failureFingerprint, NO_CI_AFTER_MS } from '../../../../src/domain/delivery/ci-watch';
import type { CiState, ForgeCheck, ReviewComment } from '../../../../src/domain/delivery/forge-shapes';
import {
  applyLook,
  emptyWatchMemory,
  nextFix,
  type LookResult,
  type PrWatch,
  type WatchMemory,
} from '../../../../src/domain/delivery/watch-rules';

const check = (name: string, state: ForgeCheck['state'], description = `${name} ${state}`): ForgeCheck => ({
  name,
  state,
  description,
  targetUrl: null,
  logExcerpt: null,
});
const ci = (sha: string, checks: ForgeCheck[], state: CiState['state'] = 'pending'): CiState => ({
  sha,
  state,
  checks,
  etag: null,
});
const pr = (number: number, change: Partial<PullRequestStatus> = {}): PullRequestStatus => ({
  milestone: number - 6,
  number,
  url: `http://forge.invalid/pulls/${number}`,
  head: `saga/demo/deliver-m${number - 6}`,
  base: 'main',
  headSha: `head-${number}`,
  draft: true,
  state: 'open',
  ci: 'pending',
  failing: [],
  ciFixes: 0,
  reviewFixes: 0,
  listedComments: [],
  ...change,
});
const watch = (number: number, change: Partial<PrWatch> = {}): PrWatch => ({
  number,
  headSha: `head-${number}`,
  etag: null,
  looks: 0,
  sinceMs: 0,
  lastCi: null,
  comments: [],
  ...change,
});
const comment = (id: number, change: Partial<ReviewComment> = {}): ReviewComment => ({
  id,
  threadId: String(id),
  author: 'bob',
  authorCanWrite: true,
  isBot: false,
  path: 'src/greet.ts',
  line: 3,
  body: 'Rename greet',
  commitSha: 'head-7',
  resolved: false,
  ...change,
});
const look = (number: number, answer: CiState | 'not-modified', extra: Partial<LookResult> = {}) => ({
  ci: answer,
  comments: [],
  pullRequest: {
    number,
    htmlUrl: '',
    head: `saga/demo/deliver-m${number - 6}`,
    base: 'main',
    title: '',
    body: '',
    draft: true,
    state: 'open' as const,
    headSha: `head-${number}`,
  },
  ...extra,
});
const opts = (memory: WatchMemory = emptyWatchMemory()) => ({ reviewBots: 'list' as const, memory });
const rules = { ciFixAttempts: 2, reviewBots: 'list' as const };
const failing = (sha: string, name = 'lint', description = 'lint: 3 errors') =>
  ci(sha, [check(name, 'failure', description), check('build', 'success')], 'failure');

describe('a look at a PR', () => {
  test('neutral and skipped checks are not failures: green with nothing failing', () => {
    const checks = [check('build', 'success'), check('docs', 'neutral'), check('e2e', 'skipped')];
    const next = applyLook(pr(7), watch(7), look(7, ci('head-7', checks, 'success')), 1_000, opts());
    expect(next.pr).toMatchObject({ ci: 'success', failing: [] });
    expect(nextFix([next.pr], [next.watch], emptyWatchMemory(), rules)).toBeNull();
  });

  test('a failure shows with the failing checks’ names; a not-modified answer keeps what was read and its ETag', () => {
    const first = applyLook(pr(7), watch(7), look(7, { ...failing('head-7'), etag: 'W/"1"' }), 1_000, opts());
    expect(first.pr).toMatchObject({ ci: 'failure', failing: ['lint'] });
    const again = applyLook(first.pr, first.watch, look(7, 'not-modified'), 2_000, opts());
    expect(again.watch).toMatchObject({ etag: 'W/"1"', looks: 2, lastCi: first.watch.lastCi });
    expect(again.pr.ci).toBe('failure');
  });

  test('comments not read again (the PR’s count unchanged) keep what the last read saw, and its count', () => {
    const bob = comment(1, { author: 'bob' });
    const read = look(7, ci('head-7', [check('build', 'pending')]), { comments: [bob] });
    read.pullRequest.reviewCommentCount = 1;
    const first = applyLook(pr(7), watch(7), read, 1_000, opts());
    expect(first.watch).toMatchObject({ comments: [bob], commentCount: 1 });
    const again = applyLook(
      first.pr,
      first.watch,
      look(7, 'not-modified', { comments: 'unchanged' }),
      2_000,
      opts(),
    );
    expect(again.watch).toMatchObject({ comments: [bob], commentCount: 1 });
    expect(nextFix([again.pr], [again.watch], emptyWatchMemory(), rules)).toMatchObject({ kind: 'review' });
  });

  test('a head moved by someone starts the backoff, the ETag and the silence clock again', () => {
    const watched = watch(7, { looks: 9, etag: 'W/"9"', sinceMs: 0, lastCi: failing('head-7') });
    const moved = look(7, ci('pushed', [check('build', 'pending')]), {});
    moved.pullRequest.headSha = 'pushed';
    const next = applyLook(pr(7), watched, moved, 60 * 60_000, opts());
    expect(next.watch).toMatchObject({ headSha: 'pushed', looks: 1, sinceMs: 60 * 60_000, etag: null });
    expect(next.pr).toMatchObject({ headSha: 'pushed', ci: 'pending', failing: [] });
  });

  test('a CI answer about the old head, after someone moved it, is ignored', () => {
    const stale = look(7, failing('head-7'));
    stale.pullRequest.headSha = 'pushed';
    const next = applyLook(pr(7), watch(7), stale, 1_000, opts());
    expect(next.watch.lastCi).toBeNull();
    expect(next.pr).toMatchObject({ headSha: 'pushed', ci: 'pending', failing: [] });
    expect(nextFix([next.pr], [next.watch], emptyWatchMemory(), rules)).toBeNull();
  });

  test('no check at all for 10 minutes of the head is `no-ci`, not before; a new head waits again', () => {
    const silent = (at: number, w = watch(7)) => applyLook(pr(7), w, look(7, ci('head-7', [])), at, opts());
    expect(silent(NO_CI_AFTER_MS - 1).pr.ci).toBe('pending');
    const after = silent(NO_CI_AFTER_MS);
    expect(after.pr.ci).toBe('no-ci');
    const moved = look(7, ci('new', []));
    moved.pullRequest.headSha = 'new';
    expect(applyLook(after.pr, after.watch, moved, NO_CI_AFTER_MS + 1, opts()).pr.ci).toBe('pending');
  });

  test('comments by a read-only user or a bot are listed with why; resolved and handled ones are not', () => {
    const comments = [
      comment(1),
      comment(2, { author: 'carol', authorCanWrite: false }),
      comment(3, { author: 'ci-bot', isBot: true }),
      comment(4, { resolved: true }),
      comment(5, { author: 'eve', authorCanWrite: false, resolved: true }),
    ];
    const memory = { ...emptyWatchMemory(), handledComments: [1] };
    const next = applyLook(pr(7), watch(7), look(7, 'not-modified', { comments }), 1, opts(memory));
    expect(next.pr.listedComments).toEqual([
      { id: 2, author: 'carol', place: 'src/greet.ts:3', why: 'no write access' },
      { id: 3, author: 'ci-bot', place: 'src/greet.ts:3', why: 'from a bot' },
    ]);
  });
});

describe('the next fix', () => {
  const afterLook = (number: number, answer: CiState, comments: ReviewComment[] = []) =>
    applyLook(pr(number), watch(number), look(number, answer, { comments }), 1_000, opts());

  test('a failing check is a fix once: the same failure (its numbers changed) is not sent again', () => {
    const a = afterLook(7, failing('head-7'));
    const work = nextFix([a.pr], [a.watch], emptyWatchMemory(), rules);
    expect(work).toMatchObject({ kind: 'ci', pr: 7, sha: 'head-7', check: { name: 'lint' } });
    expect(work?.kind === 'ci' && work.request).toContain('CI check "lint" failed on head-7');
    const memory = {
      ...emptyWatchMemory(),
      seenFailures: [failureFingerprint('head-7', failing('head-7').checks[0]!)],
    };
    const again = afterLook(7, failing('head-7', 'lint', 'lint: 4 errors'));
    expect(nextFix([again.pr], [again.watch], memory, rules)).toBeNull();
    // The same check failing on a new commit (after a fix) is a new failure.
    const moved = look(7, failing('fixed'));
    moved.pullRequest.headSha = 'fixed';
    const later = applyLook(again.pr, again.watch, moved, 2_000, opts(memory));
    expect(nextFix([later.pr], [later.watch], memory, rules)).toMatchObject({ kind: 'ci', sha: 'fixed' });
  });

  test('after ci_fix_attempts fixes the user is asked; each `fix again` allows one more', () => {
    const a = afterLook(7, failing('head-7'));
    const capped = { ...a.pr, ciFixes: 2 };
    expect(nextFix([capped], [a.watch], emptyWatchMemory(), rules)).toMatchObject({ kind: 'ci-cap', pr: 7 });
    const granted = { ...emptyWatchMemory(), extraCiFixes: { '7': 1 } };
    expect(nextFix([capped], [a.watch], granted, rules)).toMatchObject({ kind: 'ci', pr: 7 });
    expect(nextFix([{ ...capped, ciFixes: 3 }], [a.watch], granted, rules)).toMatchObject({ kind: 'ci-cap' });
    expect(nextFix([a.pr], [a.watch], emptyWatchMemory(), { ...rules, ciFixAttempts: 0 })).toMatchObject({
      kind: 'ci-cap',
    });
  });

  test('bottom of the stack first; CI before review; merged and closed PRs are left alone', () => {
    const seven = afterLook(7, failing('head-7'));
    const eight = afterLook(8, failing('head-8'));
    expect(
      nextFix([seven.pr, eight.pr], [seven.watch, eight.watch], emptyWatchMemory(), rules),
    ).toMatchObject({
      pr: 7,
    });
    const reviewed = afterLook(7, ci('head-7', [check('build', 'success')], 'success'), [comment(1)]);
    expect(
      nextFix([reviewed.pr, eight.pr], [reviewed.watch, eight.watch], emptyWatchMemory(), rules),
    ).toMatchObject({ kind: 'ci', pr: 8 });
    const eightGreen = afterLook(8, ci('head-8', [check('build', 'success')], 'success'));
    expect(
      nextFix([reviewed.pr, eightGreen.pr], [reviewed.watch, eightGreen.watch], emptyWatchMemory(), rules),
    ).toMatchObject({ kind: 'review', pr: 7, comment: { id: 1 } });
    const merged = { ...seven.pr, state: 'merged' as const };
    expect(nextFix([merged], [seven.watch], emptyWatchMemory(), rules)).toBeNull();
  });

  test('a writer’s comment is a fix once; a read-only user’s, a bot’s or a resolved one never', () => {
    const green = ci('head-7', [check('build', 'success')], 'success');
    const others = [
      comment(2, { authorCanWrite: false }),
      comment(3, { isBot: true }),
      comment(4, { resolved: true }),
    ];
    const only = afterLook(7, green, others);
    expect(nextFix([only.pr], [only.watch], emptyWatchMemory(), rules)).toBeNull();
    const withBob = afterLook(7, green, [...others, comment(1)]);
    const work = nextFix([withBob.pr], [withBob.watch], emptyWatchMemory(), rules);
    expect(work).toMatchObject({ kind: 'review', comment: { id: 1 } });
    expect(work?.kind === 'review' && work.request).toContain('src/greet.ts:3 — Rename greet');
    const handled = { ...emptyWatchMemory(), handledComments: [1] };
    expect(nextFix([withBob.pr], [withBob.watch], handled, rules)).toBeNull();
    // review_bots: act acts on a bot that may push.
    expect(
      nextFix([only.pr], [only.watch], emptyWatchMemory(), { ...rules, reviewBots: 'act' }),
    ).toMatchObject({
      kind: 'review',
      comment: { id: 3 },
    });
  });
});
