/**
 * The Gitea tracker adapter (src/activities/tracker/gitea.ts) against a REAL Gitea (test/harness/gitea.ts):
 * issues, labels and comments made through Gitea's API as alice (admin), bob (write) and carol (read).
 */
import { z } from 'zod';
import { createGiteaTracker } from '../../../../src/activities/tracker/gitea';
import { createTrackerActivities } from '../../../../src/activities/tracker/tracker-activities';
import { createTracker } from '../../../../src/activities/tracker/trackers';
import { WORKPAD_MARKER } from '../../../../src/domain/tracker/workpad';
import { startGitea, type TestGitea, type UserName } from '../../../harness/gitea';
import { type Actor, type TrackerFixture, trackerContract } from '../../../harness/tracker-contract';

const TOKEN_ENV = 'SAGA_TEST_GITEA_TRACKER_TOKEN';
const REPO = '/repos/alice/demo';
let gitea: TestGitea;
let fixture: TrackerFixture;

const user = (as: Actor): UserName => (as === 'owner' ? 'alice' : as);
const Labels = z.array(z.object({ id: z.number(), name: z.string() }));

async function labelIds(names: string[]): Promise<number[]> {
  const all = Labels.parse(await gitea.api('alice', 'GET', `${REPO}/labels?limit=50`));
  return names.map((n) => all.find((l) => l.name === n)!.id);
}

beforeAll(async () => {
  gitea = await startGitea();
  const env = { [TOKEN_ENV]: gitea.users.alice.token };
  fixture = {
    tracker: createGiteaTracker({ kind: 'gitea', url: gitea.url, tokenEnv: TOKEN_ENV }, env),
    scope: { kind: 'gitea', owner: 'alice', repo: 'demo' },
    ownerLogin: 'alice',
    async ensureLabel(name) {
      const all = Labels.parse(await gitea.api('alice', 'GET', `${REPO}/labels?limit=50`));
      if (!all.some((l) => l.name === name))
        await gitea.api('alice', 'POST', `${REPO}/labels`, { name, color: '#00aabb' });
    },
    async newIssue(as, input) {
      const labels = await labelIds(input.labels);
      const created = z
        .object({ number: z.number() })
        .parse(await gitea.api(user(as), 'POST', `${REPO}/issues`, { ...input, labels }));
      return { kind: 'gitea', owner: 'alice', repo: 'demo', number: created.number };
    },
    async comment(as, ref, body) {
      const n = (ref as { number: number }).number;
      const made = z
        .object({ id: z.number() })
        .parse(await gitea.api(user(as), 'POST', `${REPO}/issues/${n}/comments`, { body }));
      return String(made.id);
    },
    async labelsOf(ref) {
      const n = (ref as { number: number }).number;
      return Labels.parse(await gitea.api('alice', 'GET', `${REPO}/issues/${n}/labels`)).map((l) => l.name);
    },
    async commentBodies(ref) {
      const n = (ref as { number: number }).number;
      const list = z
        .array(z.object({ body: z.string() }))
        .parse(await gitea.api('alice', 'GET', `${REPO}/issues/${n}/comments`));
      return list.map((c) => c.body);
    },
  };
}, 120_000);

afterAll(async () => {
  await gitea?.stop();
});

describe('the Gitea tracker against a real Gitea', () => {
  trackerContract(() => fixture);
});

describe('related issues on Gitea', () => {
  it('reads the issues an issue depends on as related', async () => {
    const blocker = await fixture.newIssue('owner', {
      title: 'Set up greeting config',
      body: '',
      labels: [],
    });
    const ref = await fixture.newIssue('owner', { title: 'Greet', body: '', labels: [] });
    await gitea.api('alice', 'POST', `${REPO}/issues/${ref.number}/dependencies`, {
      owner: 'alice',
      repo: 'demo',
      index: blocker.number,
    });
    expect((await fixture.tracker.issue(ref)).related).toEqual([
      { ref: `gitea:alice/demo#${blocker.number}`, title: 'Set up greeting config' },
    ]);
  });
});

describe('the tracker activities against a real Gitea', () => {
  const activities = () =>
    createTrackerActivities((c) => createTracker(c, { [TOKEN_ENV]: gitea.users.alice.token }));
  const connection = () => fixture.tracker.connection;

  it('writes one workpad: created once, then edited in place when no id is known', async () => {
    const ref = await fixture.newIssue('owner', { title: 'Workpad twice', body: '', labels: [] });
    await fixture.comment('bob', ref, 'a comment before the workpad');
    const input = { tracker: connection(), ref, commentId: null };
    const first = await activities().writeWorkpad({ ...input, body: 'plan' });
    const second = await activities().writeWorkpad({ ...input, body: 'milestone 1' });
    expect(second).toEqual(first);
    expect(await fixture.commentBodies(ref)).toEqual([
      'a comment before the workpad',
      `${WORKPAD_MARKER}\nmilestone 1`,
    ]);
    // With its id known, the edit goes straight to it.
    await activities().writeWorkpad({ ...input, commentId: first.commentId, body: 'done' });
    expect((await fixture.commentBodies(ref))[1]).toBe(`${WORKPAD_MARKER}\ndone`);
  });

  it('posts a comment with a marker once, however often the activity runs', async () => {
    const ref = await fixture.newIssue('owner', { title: 'Questions once', body: '', labels: [] });
    const input = { tracker: connection(), ref, body: 'q1: which greeting?', marker: '<!-- saga:q1 -->' };
    const first = await activities().postIssueComment(input);
    expect(await activities().postIssueComment(input)).toEqual(first);
    expect(await fixture.commentBodies(ref)).toEqual(['<!-- saga:q1 -->\nq1: which greeting?']);
    // Without a marker every call posts.
    await activities().postIssueComment({ ...input, marker: null, body: 'note' });
    expect(await fixture.commentBodies(ref)).toHaveLength(2);
  });

  it('reads the issue, the labelled list and the replies', async () => {
    await fixture.ensureLabel('saga-activities');
    const ref = await fixture.newIssue('owner', {
      title: 'Via activities',
      body: 'b',
      labels: ['saga-activities'],
    });
    await fixture.comment('carol', ref, 'hi');
    const acts = activities();
    expect((await acts.readTrackerIssue({ tracker: connection(), ref })).title).toBe('Via activities');
    const listed = await acts.listLabelledIssues({
      tracker: connection(),
      scope: fixture.scope,
      label: 'saga-activities',
    });
    expect(listed).toEqual([ref]);
    const replies = await acts.readIssueReplies({ tracker: connection(), ref, afterCommentId: null });
    expect(replies.map((r) => [r.author, r.canWrite])).toEqual([['carol', false]]);
    await acts.setIssuePhase({ tracker: connection(), ref, phase: 'review' });
    expect((await fixture.labelsOf(ref)).sort()).toEqual(['saga-activities', 'saga:review']);
  });
});
