import {
  classifyAttempt,
  reviewEnd,
  type AttemptCheck,
  type AttemptRun,
} from '../../../../src/domain/fleet/task-outcome';

const run = (over: Partial<AttemptRun> = {}): AttemptRun => ({
  transcriptPath: '/runs/a1/transcript.log',
  report: null,
  failure: null,
  exitCode: 0,
  signal: null,
  timedOut: false,
  idle: false,
  ...over,
});
const check = (over: Partial<AttemptCheck> = {}): AttemptCheck => ({
  text: 'tests pass',
  check: 'npm test',
  exitCode: 0,
  timedOut: false,
  outputPath: '/runs/a1-checks/1.log',
  ...over,
});

describe('classifyAttempt', () => {
  test('checks that pass decide, even over a blocked report', () => {
    const outcome = classifyAttempt(1, run({ report: { status: 'blocked', reason: 'x' } }), {
      passed: true,
      results: [check()],
    });
    expect(outcome).toEqual({ passed: true, evidence: ['/runs/a1-checks/1.log'] });
  });

  test('failed checks: their outputs and notes for the next attempt, and checksFailed', () => {
    const failed = check({ exitCode: 1, outputPath: '/o/2.log' });
    const timedOut = check({
      text: 'lint',
      check: 'npm run lint',
      exitCode: null,
      timedOut: true,
      outputPath: '/o/3.log',
    });
    const outcome = classifyAttempt(2, run(), { passed: false, results: [check(), failed, timedOut] });
    expect(outcome).toEqual({
      passed: false,
      fatal: false,
      agentBlocked: null,
      checksFailed: true,
      failures: ['/o/2.log', '/o/3.log'],
      notes: [
        'Check failed: tests pass (`npm test`) exit 1',
        'Check failed: lint (`npm run lint`) timed out',
      ],
      reason: 'Check failed: tests pass (`npm test`) exit 1; Check failed: lint (`npm run lint`) timed out',
      evidence: ['/runs/a1-checks/1.log', '/o/2.log', '/o/3.log'],
    });
  });

  test('a failure no retry fixes is fatal, with the CLI reason', () => {
    const outcome = classifyAttempt(
      3,
      run({ failure: { retryable: false, message: 'not logged in' } as never }),
      null,
    );
    expect(outcome).toMatchObject({
      passed: false,
      fatal: true,
      reason: 'not logged in',
      notes: ['Attempt 3: not logged in'],
      failures: ['/runs/a1/transcript.log'],
      evidence: ['/runs/a1/transcript.log'],
    });
  });

  test("the agent's blocked report is fatal and names its reason", () => {
    const outcome = classifyAttempt(
      1,
      run({ report: { status: 'blocked', reason: 'SPEC GAP: which port?' } }),
      {
        passed: false,
        results: [check({ exitCode: 2, outputPath: '/o/1.log' })],
      },
    );
    expect(outcome).toMatchObject({
      passed: false,
      fatal: true,
      agentBlocked: 'SPEC GAP: which port?',
      checksFailed: false,
      failures: ['/o/1.log', '/runs/a1/transcript.log'],
      notes: ['Attempt 1: you reported blocked: SPEC GAP: which port?'],
      reason: 'agent reported blocked: SPEC GAP: which port?',
    });
  });

  test('an agent that did not finish: why, from its run', () => {
    expect(classifyAttempt(1, run({ timedOut: true }), null)).toMatchObject({
      fatal: false,
      reason: 'agent timed out',
      notes: ['Attempt 1: the agent timed out.'],
    });
    expect(classifyAttempt(1, run({ idle: true }), null)).toMatchObject({
      reason: 'agent printed nothing for too long (hung)',
    });
    expect(classifyAttempt(1, run({ exitCode: null, signal: 'SIGKILL' }), null)).toMatchObject({
      reason: 'agent exited with SIGKILL',
    });
  });
});

describe('reviewEnd', () => {
  const grant = { limitUsd: 10, spentElsewhereUsd: 7, onExhausted: 'finish' as const };
  test('a pass changes nothing', () => {
    expect(reviewEnd('pass', grant, 1)).toBeNull();
  });
  test('a spent budget: the saga budget when there is one, else the task budget', () => {
    expect(reviewEnd('budget', grant, 3)).toEqual({
      kind: 'budget',
      reason: 'budget: the saga spent $10.00 of $10; no new agent run starts',
    });
    expect(reviewEnd('budget', null, 3)).toEqual({
      kind: 'budget',
      reason: 'budget: the task budget is spent',
    });
  });
  test("the user's abort or escalation at a checkpoint stops the task", () => {
    expect(reviewEnd('escalated', null, 0)).toEqual({
      kind: 'stop',
      reviewStop: 'escalated',
      reason: 'quality-locked review: escalated at its checkpoint',
    });
  });
});
