/**
 * The Gitea tracker adapter (src/activities/tracker/gitea.ts) against a REAL Gitea (test/harness/gitea.ts):
 * issues, labels and comments made through Gitea's API as alice (admin), bob (write) and carol (read).
 */
import { z } from 'zod';
import { createGiteaTracker } from '../../../../src/activities/tracker/gitea';
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
