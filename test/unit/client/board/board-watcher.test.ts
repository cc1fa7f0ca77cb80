/** The board's shared watcher: one read per topic per poll whatever the number of subscribers. */
import { BoardWatcher, LIST_TOPIC, type BoardEvent } from '../../../../src/client/board/watcher';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('board watcher', () => {
  it('reads a topic once per poll for any number of subscribers and sends only changes', async () => {
    let reads = 0;
    let value = 1;
    const watcher = new BoardWatcher(
      {
        list: async () => ({ sagas: [] }),
        saga: async (name) => {
          reads++;
          return { name, value };
        },
      },
      20,
    );
    const seen: BoardEvent[][] = Array.from({ length: 10 }, () => []);
    const stops = seen.map((events) => watcher.subscribe('s', (e) => events.push(e)));
    await sleep(110);
    const polls = watcher.reads;
    expect(reads).toBe(polls);
    expect(polls).toBeLessThanOrEqual(8);
    for (const events of seen) expect(events).toHaveLength(1);
    value = 2;
    await sleep(60);
    for (const events of seen) expect(events.map((e) => JSON.parse(e.data).value)).toEqual([1, 2]);
    stops.forEach((stop) => stop());
    const after = reads;
    await sleep(80);
    expect(reads).toBeLessThanOrEqual(after + 1);
    watcher.close();
  });

  it("reads a new saga first without its agents' lines, then whole at once (not a poll later)", async () => {
    const asked: boolean[] = [];
    const watcher = new BoardWatcher(
      {
        list: async () => ({ sagas: [] }),
        saga: async (name, { first }) => {
          asked.push(first);
          return { name, agents: first ? {} : { '1.1': 'running' } };
        },
      },
      10_000,
    );
    const events: BoardEvent[] = [];
    watcher.subscribe('s', (e) => events.push(e));
    await sleep(30);
    watcher.close();
    expect(asked).toEqual([true, false]);
    // The second (a delta, or whole when that is smaller) carries the agents; no poll interval went by.
    expect(events.map((e) => e.id)).toEqual(['1', '2']);
    expect(events[1]!.data).toContain('running');
  });

  it('gives a late subscriber the latest event at once, and errors as error events', async () => {
    const watcher = new BoardWatcher(
      {
        list: async () => ({ sagas: ['a'] }),
        saga: async () => Promise.reject(new Error('No saga named x')),
      },
      1_000,
    );
    const first: BoardEvent[] = [];
    watcher.subscribe(LIST_TOPIC, (e) => first.push(e));
    watcher.subscribe('x', (e) => first.push(e));
    await sleep(30);
    expect(first.map((e) => e.event).sort()).toEqual(['error', 'sagas']);
    const late: BoardEvent[] = [];
    watcher.subscribe(LIST_TOPIC, (e) => late.push(e));
    expect(late).toEqual([{ event: 'sagas', data: JSON.stringify({ sagas: ['a'] }) }]);
    watcher.close();
  });

  it('a slow topic holds up no other: a saga subscribed while the list still reads gets its status at once', async () => {
    let releaseList: () => void = () => undefined;
    const watcher = new BoardWatcher(
      {
        list: () => new Promise((resolve) => (releaseList = () => resolve({ sagas: [] }))),
        saga: async (name) => ({ name }),
      },
      1_000,
    );
    const events: BoardEvent[] = [];
    watcher.subscribe(LIST_TOPIC, (e) => events.push(e));
    watcher.subscribe('s', (e) => events.push(e));
    await sleep(30);
    expect(events.map((e) => e.event)).toEqual(['status']);
    releaseList();
    await sleep(10);
    expect(events.map((e) => e.event)).toEqual(['status', 'sagas']);
    watcher.close();
  });
});
