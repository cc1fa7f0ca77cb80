import { FlagsResultSchema } from '../../../../src/domain/contract/flags-result';
import { SagaInputSchema, type SagaInput } from '../../../../src/domain/saga/saga-input';
import { intakeSource } from '../../../../src/domain/tracker/intake-source';
import type { TrackerWatchInput } from '../../../../src/domain/tracker/issue-sync';
import { handledBeforeLabel, issueSagaInput } from '../../../../src/domain/tracker/watch-saga';

const watch = (
  over: Partial<TrackerWatchInput> = {},
  template: Partial<TrackerWatchInput['template']> = {},
): TrackerWatchInput => ({
  scope: { kind: 'gitea', owner: 'alice', repo: 'demo' },
  label: 'saga',
  tracker: { kind: 'gitea', url: 'http://127.0.0.1:3000', tokenEnv: 'GITEA_TOKEN' },
  maxSagas: 2,
  pollSeconds: 30,
  argumentsText: '--autonomous --parallel=3',
  template: {
    repo: '/tmp/repo',
    base: 'main',
    agent: 'demo',
    configFile: null,
    trustRepoConfig: false,
    deliver: true,
    unconfined: [],
    sagaHome: '/home/u/.sagas/',
    worktreeRoot: '/tmp',
    hostId: 'h1',
    hostQueue: 'saga-host-h1',
    ...template,
  },
  ...over,
});

const source = (title: string) =>
  intakeSource({
    ref: { kind: 'gitea', owner: 'alice', repo: 'demo', number: 7 },
    url: 'http://127.0.0.1:3000/alice/demo/issues/7',
    title,
    body: 'Do it.',
    labels: ['saga'],
    state: 'open',
    comments: [],
    related: [],
  });

describe('issueSagaInput: the saga a watch starts for a labelled issue', () => {
  test('is a valid SagaInput named after the issue, its goal the title and the watch’s flags applied', () => {
    const input: SagaInput = issueSagaInput(watch(), source('Add a greeting'), '2026-12-06T12:00:00.000Z');
    expect(SagaInputSchema.parse(input)).toEqual(input);
    expect(input).toMatchObject({
      name: 'gitea-alice-demo-7',
      goal: 'Add a greeting',
      sagaDir: '/home/u/.sagas/gitea-alice-demo-7',
      confirmedBy: 'saga watch (label saga)',
      startedAt: '2026-12-06T12:00:00.000Z',
      repo: '/tmp/repo',
      agent: 'demo',
      deliver: true,
      plan: null,
      hostQueue: 'saga-host-h1',
    });
    expect(input.source?.ref).toEqual({ kind: 'gitea', owner: 'alice', repo: 'demo', number: 7 });
    expect(input.flags).toMatchObject({
      goal: 'Add a greeting',
      error: null,
      autonomous: true,
      autonomous_source: 'flag',
      parallel: true,
      parallel_lanes: 3,
    });
    expect('trustRepoConfig' in input).toBe(false);
    // The flags contract's key order is kept (its JSON is printed in that order).
    expect(Object.keys(input.flags)).toEqual(Object.keys(FlagsResultSchema.shape));
  });

  test('a title that looks like flags stays the goal and sets none', () => {
    const input = issueSagaInput(
      watch({ argumentsText: '' }),
      source('--quality-locked --bogus run this'),
      '2026-12-06T12:00:00.000Z',
    );
    expect(input.goal).toBe('--quality-locked --bogus run this');
    expect(input.flags.goal).toBe('--quality-locked --bogus run this');
    expect(input.flags.quality_locked).toBe(false);
    expect(input.flags.error).toBeNull();
  });

  test('the repository’s flag defaults apply with source config', () => {
    const input = issueSagaInput(
      watch({ argumentsText: '' }, { flagDefaults: { subagents: true } }),
      source('x'),
      '2026-12-06T12:00:00.000Z',
    );
    expect(input.flags).toMatchObject({ subagents: true, subagents_source: 'config' });
  });

  test('flags that do not parse, or a goal in the watch’s arguments, are clear errors', () => {
    expect(() => issueSagaInput(watch({ argumentsText: '--bogus' }), source('x'), 'now')).toThrow(
      /^saga watch arguments: Unknown flag '--bogus'/,
    );
    expect(() =>
      issueSagaInput(watch({ argumentsText: '--autonomous do this' }), source('x'), 'now'),
    ).toThrow("saga watch arguments: 'do this' is not a flag; the goal of each saga is its issue's title");
  });
});

describe('handledBeforeLabel: an issue an earlier saga marked', () => {
  test('a saga phase label is found, whichever phase', () => {
    expect(handledBeforeLabel(['saga', 'bug', 'saga:done'])).toBe('saga:done');
    expect(handledBeforeLabel(['saga:planning', 'saga'])).toBe('saga:planning');
    expect(handledBeforeLabel(['saga:cancelled'])).toBe('saga:cancelled');
  });

  test('the watch label, other labels and near misses are not a phase', () => {
    expect(handledBeforeLabel(['saga', 'bug'])).toBeNull();
    expect(handledBeforeLabel(['saga:', 'saga:Done', 'saga:other', 'xsaga:done'])).toBeNull();
    expect(handledBeforeLabel([])).toBeNull();
  });
});
