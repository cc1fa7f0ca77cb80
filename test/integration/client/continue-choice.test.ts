/**
 * `saga continue` without a name while several sagas are active: a script gets an error listing them
 * (exit 1), a terminal gets the list and a question, and the chosen saga is continued.
 */
import path from 'node:path';
import { prepareSaga, startSaga } from '../../../src/client/commands/start';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import { runSaga } from '../../harness/cli';
import { runSagaInPty } from '../../harness/pty';
import { createInProcessSagaEnv, waitForPending, type InProcessSagaEnv } from '../../harness/saga-env';

jest.setTimeout(120_000);

/** Terminal output without the cursor-moving escape sequences readline writes. */
// eslint-disable-next-line no-control-regex -- ESC starts the sequences removed here
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');

describe('saga continue with several active sagas', () => {
  let env: InProcessSagaEnv;
  // Names unique to this run: other test files' sagas may be active on the same server too.
  const suffix = Date.now().toString(36);
  const names = [`pick-first-${suffix}`, `pick-second-${suffix}`];

  beforeAll(async () => {
    env = await createInProcessSagaEnv('continue-choice');
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    for (const name of names) {
      const input = await prepareSaga({
        repo,
        argumentsText: 'Add greeting',
        plan: GREETING_PLAN_FILE,
        name,
      });
      await startSaga(env.client, input);
      await waitForPending(env, name, 'confirm-name');
    }
  });
  afterAll(async () => {
    for (const name of names)
      await env.client.workflow
        .getHandle(sagaWorkflowId(name))
        .terminate('test over')
        .catch(() => undefined);
    await env.close();
  });

  test('without a terminal: an error that lists the active sagas and says to pass NAME', async () => {
    const result = await runSaga(['continue'], env.cliEnv);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Several sagas are active; say which one: saga continue NAME');
    for (const name of names) expect(result.stderr).toMatch(new RegExp(`${name} +phase planning`));
    expect(result.stdout).toBe('');
  });

  test('at a terminal: lists them, reads the choice, and continues the second saga', async () => {
    let listing = '';
    const result = await runSagaInPty(['continue', '--detach'], env.cliEnv, (raw) => {
      const output = plain(raw);
      if (!/Which saga\? \(1-\d+ or a name\): $/.test(output)) return null;
      listing = output;
      // The second saga's number in the list (sagas of other test files may be listed too).
      const row = new RegExp(`(\\d+)\\) ${names[1]} `).exec(output);
      return row ? `${row[1]}\r` : 'nobody\r';
    });
    // Listed in the order they started.
    expect(listing.indexOf(names[0]!)).toBeLessThan(listing.indexOf(names[1]!));
    expect(listing).toMatch(
      new RegExp(`\\d+\\) ${names[0]} +phase planning {2}waiting for input {2}repo .*greeting`),
    );
    expect(listing).toMatch(new RegExp(`\\d+\\) ${names[1]} +phase planning {2}waiting for input {2}repo `));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Saga ${names[1]} — planning`);
    expect(result.stdout).not.toContain(`Saga ${names[0]} —`);
  });
});
