/**
 * Temporal's time-skipping test server, for workflow tests that run hours of workflow time in seconds
 * (interaction-timers.test.ts, fleet-decisions*.test.ts). The SDK's own download fails on this machine: the
 * binary is the one in tools/temporal-test-server.
 */
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';

const TEST_SERVER = path.resolve(
  __dirname,
  '..',
  '..',
  'tools',
  'temporal-test-server',
  'bin',
  'temporal-test-server',
);

/** A fresh time-skipping server (the SDK's runtime logs warnings only). */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    /* installed already in this process */
  }
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: TEST_SERVER } },
  });
}
