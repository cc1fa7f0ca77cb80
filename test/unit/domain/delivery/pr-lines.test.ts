import type { PullRequestStatus } from '../../../../src/domain/contract/state';
import { pullRequestLine } from '../../../../src/domain/delivery/pr-lines';

const pr = (change: Partial<PullRequestStatus> = {}): PullRequestStatus => ({
  milestone: 2,
  number: 8,
  url: 'http://forge.invalid/alice/demo/pulls/8',
  head: 'saga/demo/deliver-m2',
  base: 'saga/demo/deliver-m1',
  headSha: 'abc',
  draft: true,
  state: 'open',
  ci: 'pending',
  failing: [],
  ciFixes: 0,
  reviewFixes: 0,
  listedComments: [],
  ...change,
});

describe('a pull request’s line (acceptance, status, PROGRESS.md)', () => {
  test('names the PR, its milestone, branches, state, CI and its page', () => {
    expect(pullRequestLine(pr())).toBe(
      '#8 milestone 2, saga/demo/deliver-m2 → saga/demo/deliver-m1: draft, CI pending ' +
        'http://forge.invalid/alice/demo/pulls/8',
    );
    expect(pullRequestLine(pr({ draft: false, ci: 'success' }))).toContain(': ready for review, CI success ');
    expect(pullRequestLine(pr({ state: 'merged' }))).toContain(': merged, CI pending ');
    expect(pullRequestLine(pr({ ci: 'no-ci' }))).toContain('CI no-ci');
    expect(pullRequestLine(pr({ milestone: null, head: 'saga/demo/integration', base: 'main' }))).toMatch(
      /^#8 all milestones, saga\/demo\/integration → main: /,
    );
  });

  test('a failure names the failing checks; fixes and comments not acted on are counted with why', () => {
    const line = pullRequestLine(
      pr({
        ci: 'failure',
        failing: ['lint', 'test'],
        ciFixes: 2,
        reviewFixes: 1,
        listedComments: [
          { id: 2, author: 'carol', place: 'src/a.ts:3', why: 'no write access' },
          { id: 3, author: 'ci-bot', place: 'the pull request', why: 'from a bot' },
        ],
      }),
    );
    expect(line).toContain('draft, CI failure (lint, test), 2 CI fix(es), 1 review fix(es), ');
    expect(line).toContain('2 comment(s) not acted on (carol: no write access; ci-bot: from a bot)');
    // A failure whose checks were not named (a forge that gives only the combined state) says so plainly.
    expect(pullRequestLine(pr({ ci: 'failure' }))).toContain('CI failure http');
    expect(pullRequestLine(pr())).not.toContain('fix(es)');
  });
});
