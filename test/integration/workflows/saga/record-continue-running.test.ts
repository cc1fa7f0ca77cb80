/**
 * `saga continue` on a saga whose worker process died (kill -9) while its run is still RUNNING on the
 * server: the record (the run's start state plus the integrated milestones' record files) is checked
 * against git BEFORE a worker picks the run up again. A lost merge stops a script without the answer
 * (nothing resumed, the branch unchanged); `--lost-merges=redo` merges it back before the worker starts,
 * and the finding reaches the acceptance prompt and REPORT.md through the `reconcile` update.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { respond } from '../../../../src/client/saga-client';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { runSaga } from '../../../harness/cli';
import { startApprovedSaga } from '../../../harness/fleet-saga';
import { loseNewestMerge } from '../../../harness/lost-merge';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { ensureBuilt, killStrayWorkers, spawnWorker } from '../../../harness/worker-process';

jest.setTimeout(300_000);

const OK_TEST = "require('node:test')('ok', () => {});\n";
const NAME = 'crashed-worker';

describe('saga continue on a running saga whose worker died', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('record-running');
    await ensureBuilt();
  });
  afterAll(async () => {
    await killStrayWorkers();
    await env.close();
  });

  test('a lost merge is asked about before the worker starts, redone, and reported at acceptance', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      script: {
        tasks: {
          '1.1': {
            attempts: [
              {
                files: {
                  'src/greet.js': "module.exports = { greet: (n = 'world') => `Hello, ${n}!` };\n",
                  'test/greet.test.js': OK_TEST,
                },
              },
            ],
          },
          '1.2': { attempts: [{ files: { 'test/greet-default.test.js': OK_TEST } }] },
          '2.1': {
            attempts: [
              {
                sleep_ms: 3000,
                files: { 'bin/greet.js': '#!/usr/bin/env node\n', 'test/cli.test.js': OK_TEST },
              },
            ],
          },
        },
      },
    });
    const worker = await spawnWorker(env, env.hostId);
    await startApprovedSaga(env, { repo, planFile: GREETING_PLAN_FILE, name: NAME, args: 'Add greeting' });
    const inFlight = await waitForStatus(env, NAME, (s) => s.milestones[1]?.tasks[0]?.status === 'running');
    expect(inFlight.milestones[0]!.status).toBe('integrated');
    // The laptop closes: the worker process dies at once; the run stays RUNNING on the server.
    expect((await worker.stop('SIGKILL')).signal).toBe('SIGKILL');
    const run = env.client.workflow.getHandle(sagaWorkflowId(NAME));
    const { runId, status } = await run.describe();
    expect(status.name).toBe('RUNNING');

    // The integration branch loses its newest merge: task 1.2's (it depends on 1.1, so merges last).
    const { branch, before, lostCommit, isMerged, head } = loseNewestMerge(repo, NAME);
    expect(inFlight.milestones[0]!.tasks.find((t) => t.id === '1.2')!.commit).toBe(lostCommit);
    expect(isMerged()).toBe(false);
    const eventsBefore = (await run.fetchHistory()).events?.length;

    // A script without the answer: told what was found; no worker started, nothing resumed or changed.
    const scripted = await runSaga(['continue', NAME, '--detach'], env.cliEnv);
    expect(scripted.code).toBe(1);
    expect(scripted.stderr).toContain(`Saga '${NAME}': the integration branch lost the merge of 1 task(s)`);
    expect(scripted.stderr).toContain(`task 1.2 (Default name), commit ${lostCommit.slice(0, 12)}`);
    expect(scripted.stderr).toContain(`saga continue ${NAME} --lost-merges=redo`);
    expect(scripted.stdout).not.toContain('started one in this process');
    expect((await run.fetchHistory()).events?.length).toBe(eventsBefore);
    expect(head()).toBe(before);

    // Redo: the merge is back before the worker starts; the run (the same one) is told what was found.
    const cont = await runSaga(['continue', NAME, '--detach', '--lost-merges=redo'], env.cliEnv, 120_000);
    // (A projector the dead worker ran is retried and may WARN on stderr while the run's task moves over.)
    expect(cont.code).toBe(0);
    const out = cont.stdout;
    expect(out).toContain('merge redone by cli:');
    expect(out.indexOf('Reconciliation: saga continue at')).toBeGreaterThanOrEqual(0);
    expect(out.indexOf('merge redone by cli:')).toBeLessThan(out.indexOf('started one in this process'));
    expect(out).toContain('with what reconciliation found');
    expect(isMerged()).toBe(true);
    expect((await run.describe()).runId).toBe(runId);

    // The saga goes on on a worker of its host; acceptance and REPORT.md carry the finding.
    const next = await spawnWorker(env, env.hostId);
    const atAcceptance = await waitForPending(env, NAME, 'acceptance-1', 180_000);
    const finding = `Task 1.2: recorded as integrated but not merged into '${branch}'; merge redone by cli:`;
    const prompt = atAcceptance.pending.find((p) => p.id === 'acceptance-1')!.prompt;
    // The killed task's worktree may also be found dirty (its agent may have written before it died).
    expect(prompt).toMatch(/saga continue found [12] difference\(s\) between the record and git/);
    expect(prompt).toContain(`- ${finding}`);
    const report = readFileSync(path.join(atAcceptance.sagaDir, 'REPORT.md'), 'utf8');
    expect(report).toContain('## Reconciliation (saga continue)');
    expect(report).toContain(`- ${finding}`);
    await respond(env.client, NAME, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
    expect((await run.result()).phase).toBe('complete');
    await next.stop('SIGTERM', 40_000);
  });
});
