/**
 * The README's first command: `saga demo` runs a whole saga on a generated sample repo with the demo agent
 * and ends complete, printing where to look. (Here it reuses the test run's server, as it reuses any
 * server already answering at TEMPORAL_ADDRESS.)
 */
import { existsSync } from 'node:fs';
import { runSaga } from './harness/cli';
import { createSagaTestEnv, type SagaTestEnv } from './harness/saga-env';

jest.setTimeout(240_000);

describe('saga demo', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('demo');
  });
  afterAll(async () => env.close());

  test('completes a whole saga and prints the report and where to look', async () => {
    const demo = await runSaga(['demo'], env.cliEnv, 200_000);
    expect(demo.stderr).not.toMatch(/unexpected error/);
    expect(demo.code).toBe(0);
    const out = demo.stdout;
    // What it asked, as a user would see it.
    for (const kind of ['confirm-name', 'question', 'plan-approval', 'acceptance'])
      expect(out).toContain(`? [${kind}]`);
    expect(out).toContain('Task 1.1 add-greet: passed after 2 attempt(s)');
    expect(out).toContain('reported 1 issue(s); starting round 2');
    expect(out).toMatch(/Saga demo-\S+: complete in \d+s\./);
    const report = /Report:\s+(\S+)/.exec(out)?.[1];
    expect(report && existsSync(report)).toBe(true);
  });
});
