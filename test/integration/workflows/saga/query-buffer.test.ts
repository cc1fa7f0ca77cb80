/**
 * Queries held while a workflow task is pending. The server keeps one per workflow by default and refuses
 * the next ("consistent query buffer is full", RESOURCE_EXHAUSTED), which the SDK's client backs off from
 * for a second or more: `saga status` right after an answer, while the PROGRESS.md projector's query was
 * held, took 1.5-2 s. The dev server `saga dev` and the tests start holds more; the CLI's client retries a
 * refused query within tens of ms (the buffer clears when the task completes).
 */
import { Connection, isGrpcServiceError } from '@temporalio/client';
import { SAGA_CLIENT_RETRY } from '../../../../src/client/connection';
import { MAX_BUFFERED_QUERIES } from '../../../../src/worker/dev-server';
import { testServer } from '../../../harness/server';

/** gRPC status codes (@grpc/grpc-js is not a dependency of ours). */
const GRPC_STATUS: Record<number, string> = {
  1: 'CANCELLED',
  4: 'DEADLINE_EXCEEDED',
  8: 'RESOURCE_EXHAUSTED',
};
const RESOURCE_EXHAUSTED = 8;

describe('queries held while a workflow task is pending', () => {
  let connection: Connection;
  beforeAll(async () => {
    // No retry interceptor: the server's own answer to each query is what is checked.
    connection = await Connection.connect({ address: testServer().address, interceptors: [] });
  });
  afterAll(async () => connection?.close());

  test(`the dev server holds ${MAX_BUFFERED_QUERIES} queries of one workflow, not one`, async () => {
    const workflowId = `query-buffer-${Date.now()}`;
    // Nobody polls this task queue: the first workflow task stays pending, so every query is held.
    await connection.workflowService.startWorkflowExecution({
      namespace: 'default',
      workflowId,
      requestId: workflowId,
      workflowType: { name: 'sagaWorkflow' },
      taskQueue: { name: `${workflowId}-nobody` },
    });
    try {
      const query = () =>
        connection
          .withDeadline(Date.now() + 1_500, () =>
            connection.workflowService.queryWorkflow({
              namespace: 'default',
              execution: { workflowId },
              query: { queryType: 'status' },
            }),
          )
          .then(
            () => 'answered',
            (error: unknown) =>
              isGrpcServiceError(error) ? (GRPC_STATUS[error.code] ?? error.message) : String(error),
          );
      const outcomes = await Promise.all(Array.from({ length: MAX_BUFFERED_QUERIES }, query));
      // Each waited for the task until its deadline (the server may end it first, as cancelled); none was
      // refused. A server with the default refuses all but one as RESOURCE_EXHAUSTED.
      for (const outcome of outcomes) expect(['DEADLINE_EXCEEDED', 'CANCELLED']).toContain(outcome);
    } finally {
      await connection.workflowService.terminateWorkflowExecution({
        namespace: 'default',
        workflowExecution: { workflowId },
        reason: 'test done',
      });
    }
  });

  test('the CLI client retries a query refused for a full buffer within tens of ms, others as the SDK does', () => {
    const full = {
      code: RESOURCE_EXHAUSTED,
      details: 'consistent query buffer is full, this may be caused by too many queries',
      metadata: undefined as never,
    };
    const overloaded = { ...full, details: 'namespace rate limit exceeded' };
    expect(SAGA_CLIENT_RETRY.retryableDecider(1, full)).toBe(true);
    expect([1, 2, 3].map((attempt) => SAGA_CLIENT_RETRY.delayFunction(attempt, full))).toEqual([
      50, 100, 200,
    ]);
    expect(SAGA_CLIENT_RETRY.delayFunction(1, overloaded)).toBeGreaterThanOrEqual(1_000);
  });
});
