/**
 * The tracker adapters' shared checks (src/activities/tracker/port.ts), run against each real or stand-in
 * tracker: a fixture opens issues and comments as the tracker's own users would (the owner/admin, bob with
 * write access, carol with read access) and reads back what the tracker holds, independently of the adapter.
 */
import type { Tracker } from '../../src/activities/tracker/port';
import type { TrackerRef, TrackerScope } from '../../src/domain/tracker/tracker-ref';
import { WORKPAD_MARKER } from '../../src/domain/tracker/workpad';

export type Actor = 'owner' | 'bob' | 'carol';

export interface TrackerFixture {
  /** The adapter under test, on the owner's token. */
  tracker: Tracker;
  scope: TrackerScope;
  ownerLogin: string;
  /** A repository label (created when missing); `labels` must exist first for newIssue. */
  ensureLabel(name: string): Promise<void>;
  newIssue(as: Actor, input: { title: string; body: string; labels: string[] }): Promise<TrackerRef>;
  comment(as: Actor, ref: TrackerRef, body: string): Promise<string>;
  /** What the tracker holds now, read without the adapter. */
  labelsOf(ref: TrackerRef): Promise<string[]>;
  commentBodies(ref: TrackerRef): Promise<string[]>;
}

export function trackerContract(fixture: () => TrackerFixture): void {
  it('reads an issue with its labels and comments, oldest first', async () => {
    const f = fixture();
    await f.ensureLabel('bug');
    const ref = await f.newIssue('owner', { title: 'Greet people', body: 'Say *hello*.', labels: ['bug'] });
    await f.comment('bob', ref, 'first');
    await f.comment('carol', ref, 'second');
    const issue = await f.tracker.issue(ref);
    expect(issue).toMatchObject({ ref, title: 'Greet people', body: 'Say *hello*.', labels: ['bug'] });
    expect(issue.state).toBe('open');
    expect(issue.url).toMatch(/\/issues\/\d+$/);
    expect(issue.comments.map((c) => [c.author, c.body])).toEqual([
      ['bob', 'first'],
      ['carol', 'second'],
    ]);
  });

  it('lists the open issues carrying a label, oldest first, and no others', async () => {
    const f = fixture();
    await f.ensureLabel('saga');
    const a = await f.newIssue('owner', { title: 'A', body: '', labels: ['saga'] });
    await f.newIssue('owner', { title: 'unlabelled', body: '', labels: [] });
    const b = await f.newIssue('bob', { title: 'B', body: '', labels: ['saga'] });
    const refs = await f.tracker.labelledIssues(f.scope, 'saga');
    expect(refs.map((r) => r.number)).toEqual(expect.arrayContaining([a.number, b.number]));
    expect(refs).toHaveLength(2);
    expect(refs[0]!.number).toBeLessThan(refs[1]!.number);
  });

  it('creates, finds and edits one comment by its marker', async () => {
    const f = fixture();
    const ref = await f.newIssue('owner', { title: 'Workpad', body: '', labels: [] });
    expect(await f.tracker.findComment(ref, WORKPAD_MARKER)).toBeNull();
    const id = await f.tracker.createComment(ref, `${WORKPAD_MARKER}\nplan`);
    expect(await f.tracker.findComment(ref, WORKPAD_MARKER)).toBe(id);
    await f.tracker.editComment(ref, id, `${WORKPAD_MARKER}\nmilestone 1`);
    expect(await f.commentBodies(ref)).toEqual([`${WORKPAD_MARKER}\nmilestone 1`]);
  });

  it('moves the saga: phase label and leaves other labels alone', async () => {
    const f = fixture();
    await f.ensureLabel('bug');
    const ref = await f.newIssue('owner', { title: 'Phases', body: '', labels: ['bug'] });
    await f.tracker.setPhase(ref, 'planning');
    expect((await f.labelsOf(ref)).sort()).toEqual(['bug', 'saga:planning']);
    await f.tracker.setPhase(ref, 'implementation');
    expect((await f.labelsOf(ref)).sort()).toEqual(['bug', 'saga:implementation']);
    await f.tracker.setPhase(ref, 'implementation'); // again (a retried call): no change
    await f.tracker.setPhase(ref, 'done');
    expect((await f.labelsOf(ref)).sort()).toEqual(['bug', 'saga:done']);
  });

  it("reads the replies after a comment with their authors' write access", async () => {
    const f = fixture();
    const ref = await f.newIssue('owner', { title: 'Questions', body: '', labels: [] });
    const asked = await f.tracker.createComment(ref, 'q1?');
    await f.comment('bob', ref, '/answer q1 2');
    await f.comment('carol', ref, '/answer q1 1');
    await f.comment('bob', ref, '/approve');
    const replies = await f.tracker.commentsAfter(ref, asked);
    expect(replies.map((r) => [r.author, r.body, r.canWrite])).toEqual([
      ['bob', '/answer q1 2', true],
      ['carol', '/answer q1 1', false],
      ['bob', '/approve', true],
    ]);
    const all = await f.tracker.commentsAfter(ref, null);
    expect(all.map((r) => [r.author, r.canWrite])[0]).toEqual([f.ownerLogin, true]);
  });

  it('names the token variable, never a value, when it is not set', async () => {
    const f = fixture();
    const { createTracker } = await import('../../src/activities/tracker/trackers');
    const bare = createTracker({ ...f.tracker.connection, tokenEnv: 'SAGA_TEST_NO_SUCH_TOKEN' }, {});
    await expect(bare.whoAmI()).rejects.toThrow(/SAGA_TEST_NO_SUCH_TOKEN/);
    expect((await f.tracker.whoAmI()).login).toBe(f.ownerLogin);
  });
}
