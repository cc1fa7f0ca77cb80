/**
 * The worker-kill bench's reading of the agents' start log: for each task, its first agent process started
 * after a moment (the kill), so a dead try's agent never counts as the task running again.
 */
import { firstStarts } from '../../../bench/worker-kill';
import type { AgentStart } from '../../../bench/timed-agent';

const start = (task: string, at: number, resumed: string | null = null): AgentStart => ({
  task,
  pid: at,
  start: at,
  session: resumed ?? `bench-${task}-${at}`,
  resumed,
});

describe('worker-kill: agents running again', () => {
  test('the first start of each task at or after the kill; earlier starts do not count', () => {
    const starts = [
      start('1.1', 100),
      start('1.2', 110),
      start('1.2', 520, 'bench-1.2-110'),
      start('1.1', 530, 'bench-1.1-100'),
      start('1.1', 900, 'bench-1.1-100'),
    ];
    const again = firstStarts(starts, 500);
    expect([...again.keys()].sort()).toEqual(['1.1', '1.2']);
    expect(again.get('1.1')).toMatchObject({ start: 530, resumed: 'bench-1.1-100' });
    expect(again.get('1.2')!.start).toBe(520);
    expect(firstStarts(starts, 1000).size).toBe(0);
  });

  test('starts logged out of order still give the earliest', () => {
    expect(firstStarts([start('1.3', 700), start('1.3', 600)], 0).get('1.3')!.start).toBe(600);
  });
});
