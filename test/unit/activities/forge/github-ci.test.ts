/**
 * The GitHub adapter's pure parts: CI state from a combined status and check runs, the ETag pair, GitHub's
 * error messages and the GraphQL endpoint of a REST base.
 */
import {
  type CheckRuns,
  type CombinedStatus,
  ciStateOf,
  joinEtags,
  outputExcerpt,
  splitEtags,
} from '../../../../src/activities/forge/github-ci';
import { CI_LOG_EXCERPT_CHARS as LOG_EXCERPT_CHARS } from '../../../../src/domain/delivery/ci-watch';
import { forgeMessage, graphqlUrl } from '../../../../src/activities/forge/github-http';

const SHA = 'f'.repeat(40);
const none: CheckRuns['check_runs'][number]['output'] = { title: null, summary: null, text: null };
const status = (context: string, state: string): CombinedStatus['statuses'][number] => ({
  context,
  state,
  description: `${context} ${state}`,
  target_url: null,
});
const run = (
  name: string,
  s: string,
  conclusion: string | null,
  output = none,
): CheckRuns['check_runs'][number] => ({
  name,
  status: s,
  conclusion,
  details_url: `https://ci.example/${name}`,
  html_url: null,
  output,
});
const ci = (statuses: CombinedStatus['statuses'], runs: CheckRuns['check_runs']) =>
  ciStateOf(SHA, { sha: SHA, statuses }, { total_count: runs.length, check_runs: runs }, null);

test('no check reported yet is pending, not success', () => {
  expect(ci([], []).state).toBe('pending');
});

test('neutral, skipped and stale never fail; all passed is success', () => {
  const state = ci(
    [status('build', 'success')],
    [run('a', 'completed', 'neutral'), run('b', 'completed', 'skipped'), run('c', 'completed', 'stale')],
  );
  expect(state.state).toBe('success');
  expect(state.checks.map((c) => c.state)).toEqual(['success', 'neutral', 'skipped', 'neutral']);
});

test.each(['failure', 'timed_out', 'cancelled', 'action_required', 'startup_failure'])(
  'a check run concluded %s fails',
  (conclusion) => {
    expect(ci([], [run('t', 'completed', conclusion)]).state).toBe('failure');
  },
);

test('a status of error or failure fails; pending or a run in progress keeps it pending', () => {
  expect(ci([status('x', 'error')], []).state).toBe('failure');
  expect(ci([status('x', 'pending')], [run('t', 'completed', 'success')]).state).toBe('pending');
  expect(ci([], [run('t', 'in_progress', null)]).state).toBe('pending');
  expect(ci([status('x', 'pending')], [run('t', 'completed', 'failure')]).state).toBe('failure');
});

test("a failing run's log excerpt is its output (title, summary, text), the tail kept", () => {
  const output = { title: 'Lint', summary: 'two errors', text: `${'x'.repeat(LOG_EXCERPT_CHARS)}THE END` };
  const excerpt = outputExcerpt(output) ?? '';
  expect(excerpt.length).toBe(LOG_EXCERPT_CHARS + 1);
  expect(excerpt.endsWith('THE END')).toBe(true);
  expect(outputExcerpt(none)).toBeNull();
  const [check] = ci([], [run('lint', 'completed', 'failure', { ...none, summary: 'E1 at a.ts:3' })]).checks;
  expect(check).toMatchObject({ logExcerpt: 'E1 at a.ts:3', targetUrl: 'https://ci.example/lint' });
  const [passed] = ci([], [run('lint', 'completed', 'success', { ...none, summary: 'ok' })]).checks;
  expect(passed.logExcerpt).toBeNull();
});

test('the two ETags travel as one and come back apart; anything else reads afresh', () => {
  const joined = joinEtags('W/"a"', '"b"');
  expect(splitEtags(joined)).toEqual(['W/"a"', '"b"']);
  expect(joinEtags(null, '"b"')).toBeNull();
  expect(splitEtags('W/"a"')).toEqual([null, null]);
  expect(splitEtags(undefined)).toEqual([null, null]);
});

test("GitHub's error message: message and each error's message or code; text when not JSON", () => {
  const body = JSON.stringify({
    message: 'Validation Failed',
    errors: [
      { resource: 'PullRequest', code: 'custom', message: 'A pull request already exists for o:b.' },
      { code: 'invalid' },
    ],
  });
  expect(forgeMessage(body)).toBe('Validation Failed; A pull request already exists for o:b.; invalid');
  expect(forgeMessage('<html>Bad gateway</html>')).toBe('<html>Bad gateway</html>');
  expect(forgeMessage('')).toBe('(no message)');
});

test('the GraphQL endpoint of api.github.com and of GitHub Enterprise Server', () => {
  expect(graphqlUrl('https://api.github.com')).toBe('https://api.github.com/graphql');
  expect(graphqlUrl('https://ghe.example.com/api/v3/')).toBe('https://ghe.example.com/api/graphql');
});
