/** The budget's pure rules (src/domain/fleet/budget.ts), the Claude preset's cap argument and the config key. */
import { budgetArgsFor } from '../../src/domain/config/preset-commands';
import { textFormatProblem } from '../../src/domain/saga/interactions';
import {
  budgetRaiseProblem,
  crossedWarning,
  medianUsd,
  planEstimate,
  raisedLimit,
  remainingUsd,
  runCapUsd,
} from '../../src/domain/fleet/budget';
import { expandCommand, type SagaConfig } from '../../src/domain/config/config';
import { parseSagaConfigText } from '../../src/domain/config/config-text';

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
