/**
 * `saga continue` reconciles before the saga resumes: a saga stopped mid-implementation whose integration
 * branch lost a task's merge is not resumed until the user says redo or leave (a script without the answer
 * gets an error and nothing changes); answered redo at a terminal, the merge is back before the new run
 * starts, and the finding is in the acceptance prompt and REPORT.md. REPORT.md says per milestone what was
 * built: the agents' own summaries and each task's diff stat from git.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { respond } from '../../../../src/client/saga-client';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { runSaga } from '../../../harness/cli';
import { startApprovedSaga } from '../../../harness/fleet-saga';
import { loseNewestMerge } from '../../../harness/lost-merge';
import { runSagaInPty } from '../../../harness/pty';
import {
  createInProcessSagaEnv,
  waitForPending,
  waitForStatus,
  type InProcessSagaEnv,
} from '../../../harness/saga-env';

jest.setTimeout(300_000);

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
// eslint-disable-next-line no-control-regex -- ESC starts the sequences removed here
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
const OK_TEST = "require('node:test')('ok', () => {});\n";
const NAME = 'lost-merge';

describe('saga continue reconciles before it resumes', () => {
  let env: InProcessSagaEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('record-continue');
  });
  afterAll(async () => env.close());

  /** A saga stopped while task 2.1 runs, its integration branch reset to lose task 1.2's merge. */
  async function stoppedWithLostMerge(name: string, dir: string) {
    const repo = createSampleRepo(path.join(env.tmp(dir), 'greeting'), {
      script: {
        tasks: {
          '1.1': {
            attempts: [
              {
                files: {
                  'src/greet.js': "module.exports = { greet: (n = 'world') => `Hello, ${n}!` };\n",
                  'test/greet.test.js': OK_TEST,
                },
                report: { status: 'done', summary: 'Added greet(name) in src/greet.js with its test.' },
              },
            ],
          },
          '1.2': { attempts: [{ files: { 'test/greet-default.test.js': OK_TEST } }] },
          '2.1': {
            attempts: [
              {
                sleep_ms: 4000,
                files: { 'bin/greet.js': '#!/usr/bin/env node\n', 'test/cli.test.js': OK_TEST },
              },
            ],
          },
        },
      },
    });
    await startApprovedSaga(env, { repo, planFile: GREETING_PLAN_FILE, name, args: 'Add greeting' });
    const inFlight = await waitForStatus(env, name, (s) => s.milestones[1]?.tasks[0]?.status === 'running');
    await new Promise((r) => setTimeout(r, 1000));
    await env.client.workflow.getHandle(sagaWorkflowId(name)).terminate('simulated crash');

    // The integration branch loses its newest merge: task 1.2's (it depends on 1.1, so merges last).
    const { branch, before, lostCommit, isMerged } = loseNewestMerge(repo, name);
    const task12 = inFlight.milestones[0]!.tasks.find((t) => t.id === '1.2')!;
    expect(task12.commit).toBe(lostCommit);
    expect(isMerged()).toBe(false);
    return { repo, branch, before, lostCommit, isMerged };
  }

  test('a lost merge is asked about, redone, and reported at acceptance and in REPORT.md', async () => {
    const { repo, branch, before, lostCommit, isMerged } = await stoppedWithLostMerge(NAME, 'repo');

    // A script is told what was found and how to answer; nothing is resumed or changed.
    const scripted = await runSaga(['continue', NAME, '--detach'], env.cliEnv);
    expect(scripted.code).toBe(1);
    expect(scripted.stderr).toContain(`Saga '${NAME}': the integration branch lost the merge of 1 task(s)`);
    expect(scripted.stderr).toContain(`task 1.2 (Default name), commit ${lostCommit.slice(0, 12)}`);
    expect(scripted.stderr).toContain(`saga continue ${NAME} --lost-merges=redo`);
    const desc = await env.client.workflow.getHandle(sagaWorkflowId(NAME)).describe();
    expect(desc.status.name).toBe('TERMINATED');
    expect(git(repo, 'rev-parse', branch)).toBe(before);

    // At a terminal: asked before the saga resumes; redo puts the merge back.
    const asked: string[] = [];
    const cont = await runSagaInPty(['continue', NAME, '--detach'], env.cliEnv, (raw) => {
      const output = plain(raw);
      if (!/Redo the merge or leave it\? \(redo\/leave\): $/.test(output)) return null;
      asked.push(output);
      return 'redo\n';
    });
    expect(cont.code).toBe(0);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(
      `Task 1.2 (Default name) is recorded as integrated, but its commit ${lostCommit.slice(0, 12)} is not in the integration branch.`,
    );
    const out = plain(cont.stdout);
    // Reconciled (and redone) before the new run started.
    expect(out.indexOf('Reconciliation: saga continue at')).toBeLessThan(out.indexOf('resumed in a new run'));
    expect(out).toContain('merge redone by cli:');
    expect(isMerged()).toBe(true);

    const atAcceptance = await waitForPending(env, NAME, 'acceptance-1', 150_000);
    const finding = `Task 1.2: recorded as integrated but not merged into '${branch}'; merge redone by cli:`;
    const prompt = atAcceptance.pending.find((p) => p.id === 'acceptance-1')!.prompt;
    expect(prompt).toContain('saga continue found 1 difference(s) between the record and git');
    expect(prompt).toContain(`- ${finding}`);
    const report = readFileSync(path.join(atAcceptance.sagaDir, 'REPORT.md'), 'utf8');
    expect(report).toContain('## Reconciliation (saga continue)');
    expect(report).toContain(`- ${finding}`);

    // What was built: per milestone, prose and bullets with the agents' summaries and git's diff stats.
    expect(report).toContain('### Milestone 1: Core library — integrated');
    expect(report).toMatch(
      /2 tasks of 2 landed on the integration branch, together 3 files changed, \+3 −0 lines/,
    );
    expect(report).toMatch(
      /- \*\*1\.1 Add greet\(\)\*\* \(integrated, `[0-9a-f]{12}`\): 2 files changed, \+2 −0 lines \(`src\/greet\.js`, `test\/greet\.test\.js`\)\. The agent's summary: Added greet\(name\) in src\/greet\.js with its test\./,
    );
    expect(report).toMatch(
      /- \*\*1\.2 Default name\*\* \(integrated, `[0-9a-f]{12}`\): 1 file changed, \+1 −0 lines \(`test\/greet-default\.test\.js`\)\.\n/,
    );
    expect(report).toContain('### Milestone 2: Command-line entry point — integrated');
    expect(report).not.toContain('| Task | Title | Status |');

    await respond(env.client, NAME, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
    const result = await env.client.workflow.getHandle(sagaWorkflowId(NAME)).result();
    expect(result.phase).toBe('complete');
  });
  test('answered leave: the saga resumes without the merge, and acceptance and REPORT.md say so', async () => {
    const name = 'left-merge';
    const { branch, before, lostCommit, isMerged } = await stoppedWithLostMerge(name, 'repo-leave');
    const bad = await runSaga(['continue', name, '--lost-merges=maybe'], env.cliEnv);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--lost-merges must be 'redo' or 'leave', got 'maybe'.");

    const cont = await runSaga(['continue', name, '--detach', '--lost-merges=leave'], env.cliEnv);
    expect(cont.stderr).toBe('');
    expect(cont.code).toBe(0);
    expect(cont.stdout).toContain('left as is by cli:');
    expect(isMerged()).toBe(false);

    const atAcceptance = await waitForPending(env, name, 'acceptance-1', 150_000);
    const finding = `Task 1.2: recorded as integrated but not merged into '${branch}'; left as is by cli:`;
    expect(atAcceptance.pending.find((p) => p.id === 'acceptance-1')!.prompt).toContain(`- ${finding}`);
    const report = readFileSync(path.join(atAcceptance.sagaDir, 'REPORT.md'), 'utf8');
    expect(report).toContain(`- ${finding}`);
    expect(report).toMatch(
      /- \*\*1\.2 Default name\*\* \(integrated, `[0-9a-f]{12}`\): changed `test\/greet-default\.test\.js`; no merge of it is on the integration branch\./,
    );
    expect(git(atAcceptance.repo, 'merge-base', '--is-ancestor', before, branch)).toBe('');
    expect(lostCommit).toMatch(/^[0-9a-f]{40}$/);
    await respond(env.client, name, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
    expect((await env.client.workflow.getHandle(sagaWorkflowId(name)).result()).phase).toBe('complete');
  });
});
