/**
 * Intake from an issue on a REAL Gitea (test/harness/gitea.ts), driven through bin/saga with the demo agent:
 * the scenario of test/harness/intake-scenario.ts (`saga watch` picks up a labelled issue, the question is
 * asked and answered on the issue by a writer while a reader is ignored, the workpad and labels follow the
 * phases, the merged PRs close the issue, a restarted watch starts no second saga).
 */
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import { issueSyncWorkflowId } from '../../../src/domain/tracker/issue-sync';
import { watchWorkflowId } from '../../../src/domain/tracker/watch-id';
import { recordHistory } from '../../harness/histories';
import { runIntakeScenario } from '../../harness/intake-scenario';
import { startGitea, type TestGitea } from '../../harness/gitea';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';

jest.setTimeout(900_000);

const TOKEN_ENV = 'SAGA_TEST_INTAKE_TOKEN';
let gitea: TestGitea;
let env: SagaTestEnv;

beforeAll(async () => {
  gitea = await startGitea();
  // The worker (and bin/saga) read the token from the environment at the moment of each call.
  process.env[TOKEN_ENV] = gitea.users.alice.token;
  env = await createSagaTestEnv('intake');
  env.cliEnv[TOKEN_ENV] = gitea.users.alice.token;
  await env.startWorkers();
});

afterAll(async () => {
  await env?.client.workflow
    .getHandle(sagaWorkflowId('gitea-alice-demo-1'))
    .cancel()
    .catch(() => undefined);
  await env?.close();
  await gitea?.stop();
  delete process.env[TOKEN_ENV];
});

interface GiteaIssue {
  number: number;
  state: 'open' | 'closed';
  labels: { name: string }[];
}

test('a labelled issue: watched, asked on the issue, answered by a writer, delivered, closed by the merge', async () => {
  const api = gitea.api.bind(gitea);
  const issuePath = (n: number) => `/repos/alice/demo/issues/${n}`;
  const { name } = await runIntakeScenario(
    env,
    {
      kind: 'gitea',
      forgeConfig: ['kind: gitea', `url: ${gitea.url}`, 'repo: alice/demo', `token_env: ${TOKEN_ENV}`],
      remoteUrl: gitea.repo.cloneUrl,
      ownerGitEnv: gitea.gitEnv('alice'),
      async createIssue(title, body, labels) {
        const ids: number[] = [];
        for (const label of labels) {
          const made = (await api('alice', 'POST', '/repos/alice/demo/labels', {
            name: label,
            color: '#00aabb',
          })) as { id: number };
          ids.push(made.id);
        }
        const issue = (await api('alice', 'POST', '/repos/alice/demo/issues', { title, body })) as GiteaIssue;
        await api('alice', 'POST', `${issuePath(issue.number)}/labels`, { labels: ids });
        return issue.number;
      },
      async comment(who, issue, body) {
        await api(who === 'writer' ? 'bob' : 'carol', 'POST', `${issuePath(issue)}/comments`, { body });
      },
      async comments(issue) {
        const list = (await api('alice', 'GET', `${issuePath(issue)}/comments`)) as {
          user: { login: string };
          body: string;
        }[];
        return list.map((c) => ({ author: c.user.login, body: c.body }));
      },
      async labels(issue) {
        return ((await api('alice', 'GET', issuePath(issue))) as GiteaIssue).labels.map((l) => l.name);
      },
      async issueState(issue) {
        return ((await api('alice', 'GET', issuePath(issue))) as GiteaIssue).state;
      },
      setStatus: (sha, state, description) => gitea.setStatus(sha, state, 'ci/test', description),
      writerLogin: 'bob',
      readerLogin: 'carol',
      token: gitea.users.alice.token,
    },
    TOKEN_ENV,
  );
  // With RECORD_HISTORIES=1 the issue sync's and the watch's histories are kept for this release.
  const history = (id: string) => env.client.workflow.getHandle(id).fetchHistory();
  recordHistory('issueSyncWorkflow', await history(issueSyncWorkflowId(name)));
  // The watch's latest run: started again after a stop, it found the issue already handled.
  const watchId = watchWorkflowId({ kind: 'gitea', owner: 'alice', repo: 'demo' }, 'saga');
  recordHistory('trackerWatchWorkflow', await history(watchId));
});
