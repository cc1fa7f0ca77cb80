import { watchStatusLines, watchSummary } from '../../../src/client/commands/watch-status';
import type { TrackerWatchStatus } from '../../../src/domain/tracker/issue-sync';

const status = (over: Partial<TrackerWatchStatus> = {}): TrackerWatchStatus => ({
  scope: 'gitea:alice/demo',
  label: 'saga',
  started: [
    { ref: 'gitea:alice/demo#3', sagaName: 'gitea-alice-demo-3', at: '2026-12-06T12:00:00.000Z' },
    { ref: 'gitea:alice/demo#4', sagaName: 'gitea-alice-demo-4', at: '2026-12-06T12:01:00.000Z' },
  ],
  running: ['gitea-alice-demo-4'],
  waiting: [],
  lastPollAt: '2026-12-06T12:02:00.000Z',
  lastError: null,
  stopping: false,
  ...over,
});

describe('saga list and saga watch --status: a watch', () => {
  test('one line per watch with its counts', () => {
    expect(watchSummary(status())).toBe('gitea:alice/demo label saga — 2 started, 1 running, 0 waiting');
  });

  test("a stopping watch and its last error say so, the tracker's words on one line without escapes", () => {
    const line = watchSummary(
      status({
        stopping: true,
        lastError: 'gitea: HTTP 503\n\x1b[31mdown\x1b[0m',
        waiting: ['gitea:alice/demo#5'],
      }),
    );
    expect(line).toBe(
      'gitea:alice/demo label saga — 2 started, 1 running, 1 waiting (stopping; last error: gitea: HTTP 503 down)',
    );
  });

  test('--status lists what was started, runs and waits', () => {
    const lines = watchStatusLines(status({ waiting: ['gitea:alice/demo#5'] }));
    expect(lines).toEqual([
      'Watch: gitea:alice/demo label saga — 2 started, 1 running, 1 waiting',
      '  started gitea:alice/demo#3 → saga gitea-alice-demo-3 (2026-12-06T12:00:00.000Z)',
      '  started gitea:alice/demo#4 → saga gitea-alice-demo-4 (2026-12-06T12:01:00.000Z)',
      '  running: gitea-alice-demo-4',
      '  waiting for a free place: gitea:alice/demo#5',
      '  last poll: 2026-12-06T12:02:00.000Z',
    ]);
  });
});

test('--status says which issue an earlier saga handled, and that none was started', () => {
  const lines = watchStatusLines(
    status({
      started: [
        {
          ref: 'gitea:alice/demo#3',
          sagaName: 'gitea-alice-demo-3',
          at: '2026-12-06T12:00:00.000Z',
          handledBefore: 'saga:done',
        },
      ],
      running: [],
    }),
  );
  expect(lines[1]).toBe(
    '  handled before gitea:alice/demo#3 (labelled saga:done): no saga started (2026-12-06T12:00:00.000Z)',
  );
});
