/** The budget's pure rules (src/domain/fleet/budget.ts), the Claude preset's cap argument and the config key. */
import { budgetArgsFor } from '../../../../src/domain/config/preset-commands';
import { textFormatProblem } from '../../../../src/domain/saga/interactions';
import {
  budgetAnswerLine,
  budgetGrant,
  budgetQuestionId,
  budgetRaiseProblem,
  budgetSettings,
  budgetStopReason,
  budgetWarningId,
  crossedLimit,
  crossedWarning,
  isExhausted,
  medianUsd,
  planEstimate,
  planningBudgetQuestionId,
  raisedLimit,
  remainingUsd,
  reviewBudgetReason,
  runCapUsd,
  sagaLeftUsd,
  sagaSpentReason,
  stopsRunningTasks,
  taskBudgetReason,
  taskRunCapUsd,
} from '../../../../src/domain/fleet/budget';
import { expandCommand, type SagaConfig } from '../../../../src/domain/config/config';
import { parseSagaConfigText } from '../../../../src/domain/config/config-text';

function parseConfig(text: string): SagaConfig {
  const parsed = parseSagaConfigText(text, 'saga.config.yaml');
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  return parsed.config;
}

test('the claude preset caps a run at what is left; other CLIs and no budget get no argument', () => {
  // Never more than is left, never 0 (the CLI refuses a cap of 0).
  expect(budgetArgsFor('claude', 0.45678)).toEqual(['--max-budget-usd', '0.4567']);
  expect(budgetArgsFor('claude', 0.001)).toEqual(['--max-budget-usd', '0.001']);
  expect(budgetArgsFor('claude', 0.000001)).toEqual(['--max-budget-usd', '0.0001']);
  expect(budgetArgsFor('claude', null)).toEqual([]);
  expect(budgetArgsFor('codex', 1)).toEqual([]);
  expect(budgetArgsFor('demo', 1)).toEqual([]);
});

test('the cap is the smaller of what the task and the saga leave, rounded down to cents', () => {
  expect(runCapUsd(remainingUsd(5, 1.234), remainingUsd(2, 0.5))).toBe(1.5);
  expect(runCapUsd(remainingUsd(5, 4.999), null)).toBe(0.001);
  expect(runCapUsd(null, null)).toBeNull();
  expect(remainingUsd(1, 3)).toBe(0);
});

test('raise takes the new amount or +X; anything else is refused with the reason', () => {
  expect(raisedLimit('20', 10)).toBe(20);
  expect(raisedLimit('+5', 10)).toBe(15);
  expect(raisedLimit(' $7.5 ', 10)).toBe(7.5);
  expect(budgetRaiseProblem('lots')).toMatch(/'lots' is not a budget/);
  expect(budgetRaiseProblem('0')).toMatch(/not a budget/);
  expect(budgetRaiseProblem('-3')).toMatch(/not a budget/);
  expect(textFormatProblem('budget-amount', '+2')).toBeNull();
});

test('the warning is crossed once, at 80 %', () => {
  expect(crossedWarning(10, 7, 8)).toBe(true);
  expect(crossedWarning(10, 8, 9)).toBe(false);
  expect(crossedWarning(null, 0, 100)).toBe(false);
});

test('a budget is exhausted at its limit; no limit never is', () => {
  expect(isExhausted(1, 1)).toBe(true);
  expect(isExhausted(1, 0.99)).toBe(false);
  expect(isExhausted(null, 1e9)).toBe(false);
});

test('the config budget becomes the run settings (unset limits: none)', () => {
  expect(budgetSettings({ on_exhausted: 'finish' })).toEqual({
    taskUsd: null,
    sagaUsd: null,
    onExhausted: 'finish',
  });
  expect(budgetSettings({ task_usd: 1, saga_usd: 5, on_exhausted: 'stop' })).toEqual({
    taskUsd: 1,
    sagaUsd: 5,
    onExhausted: 'stop',
  });
});

describe('task budget reasons', () => {
  test('the task budget ends the task once spent', () => {
    expect(taskBudgetReason(0.5, null)).toBeNull();
    expect(taskBudgetReason(0.5, 1)).toBeNull();
    expect(taskBudgetReason(1.234, 1)).toBe('budget: task spent $1.23 of $1');
  });

  test('a stop at the saga budget names the limit', () => {
    expect(budgetStopReason(5)).toBe('budget: stopped at the saga budget of $5 (budget.on_exhausted: stop)');
    expect(budgetStopReason(null)).toContain('$?');
  });

  test("a review ended at the budget names the saga's when there is one", () => {
    const grant = { limitUsd: 10, spentElsewhereUsd: 7, onExhausted: 'finish' as const };
    expect(reviewBudgetReason(grant, 3)).toBe(
      'budget: the saga spent $10.00 of $10; no new agent run starts',
    );
    expect(reviewBudgetReason(null, 3)).toBe('budget: the task budget is spent');
  });
});

test("a task's view: what the saga leaves it, its next run's cap, and when no run may start", () => {
  const grant = { limitUsd: 10, spentElsewhereUsd: 7, onExhausted: 'finish' as const };
  expect(sagaLeftUsd(grant, 1)).toBe(2);
  expect(sagaLeftUsd(null, 1)).toBeNull();
  expect(taskRunCapUsd(5, grant, 4)).toBe(0);
  expect(taskRunCapUsd(5, grant, 1)).toBe(2);
  expect(taskRunCapUsd(null, null, 1)).toBeNull();
  expect(sagaSpentReason(grant, 2.5)).toBeNull();
  expect(sagaSpentReason(grant, 3)).toBe('budget: the saga spent $10.00 of $10; no new agent run starts');
  expect(sagaSpentReason({ ...grant, limitUsd: null }, 100)).toBeNull();
});

test("the fleet's view: grants, the crossing, who stops, and the ids of its notice and questions", () => {
  expect(budgetGrant(10, 6, 2, 'finish')).toEqual({
    limitUsd: 10,
    spentElsewhereUsd: 4,
    onExhausted: 'finish',
  });
  expect(budgetGrant(10, 6, 2, 'stop', true)).toMatchObject({ stopNow: true });
  expect(crossedLimit(10, 9, 10)).toBe(true);
  expect(crossedLimit(10, 10, 11)).toBe(false);
  expect(crossedLimit(null, 0, 100)).toBe(false);
  expect(stopsRunningTasks(true, 'stop')).toBe(true);
  expect(stopsRunningTasks(true, 'finish')).toBe(false);
  expect(stopsRunningTasks(false, 'stop')).toBe(false);
  // Recorded in histories of running sagas: never change them.
  expect(budgetWarningId(2, 12.5)).toBe('budget-warning-r2-1250');
  expect(budgetQuestionId(1, 10.004, 10, 3)).toBe('budget-r1-1000-of-1000-q3');
  expect(planningBudgetQuestionId(5, 5, 1)).toBe('budget-planning-500-of-500-q1');
  expect(
    budgetAnswerLine({
      interactionId: 'b',
      choice: 'raise',
      text: '+5',
      user: 'ana',
      answeredAt: '',
    } as Parameters<typeof budgetAnswerLine>[0]),
  ).toBe('Budget question answered by ana: raise +5');
});

test('estimates: tasks × the median task cost, none without earlier sagas', () => {
  expect(medianUsd([3, 1, 2, 10])).toBe(2.5);
  expect(planEstimate(4, [])).toBeNull();
  expect(
    planEstimate(4, [{ saga: 'a', finishedAt: '', totalUsd: 3, tasks: { '1.1': 1, '1.2': 2 } }]),
  ).toMatchObject({
    totalUsd: 6,
    medianTaskUsd: 1.5,
  });
});

test('budget.on_exhausted is finish by default, stop when asked, and nothing else', () => {
  expect(parseConfig('budget: { saga_usd: 5 }\n').budget.on_exhausted).toBe('finish');
  expect(parseConfig('budget: { saga_usd: 5, on_exhausted: stop }\n').budget.on_exhausted).toBe('stop');
  expect(() => parseConfig('budget: { on_exhausted: later }\n')).toThrow(/on_exhausted/);
});

test('the claude command the agent activity builds carries --max-budget-usd', () => {
  const command = ['claude', '-p', '--output-format', 'stream-json'];
  expect(expandCommand([...command, ...budgetArgsFor('claude', 1.25)], {})).toEqual([
    ...command,
    '--max-budget-usd',
    '1.25',
  ]);
});
