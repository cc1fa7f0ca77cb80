/** The per-token call budget: N calls a minute per key, a call beyond it waits for the oldest to age out. */
import {
  budgetKey,
  CALLS_PER_MINUTE,
  CallBudget,
  type BudgetClock,
} from '../../../../src/activities/tracker/call-budget';

/** A clock whose sleep moves time on at once and records each wait. */
function fakeClock(start = 1_000_000): BudgetClock & { slept: number[]; t: number } {
  const clock = {
    t: start,
    slept: [] as number[],
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.slept.push(ms);
      clock.t += ms;
    },
  };
  return clock;
}

describe('CallBudget', () => {
  it('lets N calls through at once, then makes the next wait a minute after the first', async () => {
    const clock = fakeClock();
    const budget = new CallBudget(clock);
    let waits = 0;
    for (let i = 0; i < 3; i++) await budget.take('k', 3, () => waits++);
    expect(clock.slept).toEqual([]);
    expect(budget.spentInLastMinute('k')).toBe(3);
    const start = clock.t;
    await budget.take('k', 3, () => waits++);
    expect(clock.t - start).toBe(60_000);
    // Waited in slices, signalling (heartbeating) at each.
    expect(clock.slept.every((ms) => ms <= 5_000)).toBe(true);
    expect(waits).toBe(clock.slept.length);
    expect(waits).toBeGreaterThanOrEqual(12);
  });

  it('keeps keys apart: one busy token does not slow another', async () => {
    const clock = fakeClock();
    const budget = new CallBudget(clock);
    for (let i = 0; i < 2; i++) await budget.take('a', 2);
    await budget.take('b', 2);
    expect(clock.slept).toEqual([]);
  });

  it('frees places as calls age past a minute', async () => {
    const clock = fakeClock();
    const budget = new CallBudget(clock);
    await budget.take('k', 2);
    clock.t += 30_000;
    await budget.take('k', 2);
    clock.t += 31_000;
    await budget.take('k', 2); // the first has aged out
    expect(clock.slept).toEqual([]);
    expect(budget.spentInLastMinute('k')).toBe(2);
  });

  it('keys by the variable name and the API root, never a value', () => {
    expect(budgetKey({ tokenEnv: 'GITEA_TOKEN', url: 'https://git.example.com/' })).toBe(
      'GITEA_TOKEN https://git.example.com',
    );
    expect(CALLS_PER_MINUTE).toEqual({ github: 60, gitea: 120, linear: 60 });
  });
});
