import type { ForgeCheck, ReviewComment } from '../../../../src/domain/delivery/forge-shapes';
import { fixChecks, fixTaskSpec } from '../../../../src/domain/delivery/watch-rules';
import type { Plan } from '../../../../src/domain/plan';

const check = (name: string, state: ForgeCheck['state']): ForgeCheck => ({
  name,
  state,
  description: `${name} ${state}`,
  targetUrl: null,
  logExcerpt: null,
});
const comment = (id: number): ReviewComment => ({
  id,
  threadId: String(id),
  author: 'bob',
  authorCanWrite: true,
  isBot: false,
  path: 'src/greet.ts',
  line: 3,
  body: 'Rename greet',
  commitSha: 'head-7',
  resolved: false,
});

describe('a fix task', () => {
  const plan: Pick<Plan, 'exit_criteria' | 'milestones'> = {
    exit_criteria: [
      { id: 'E1', text: 'tests pass', check: 'npm test' },
      { id: 'E2', text: 'looks right', check: 'true', by_hand: true },
    ],
    milestones: [1, 2].map((id) => ({
      id,
      slug: `m${id}`,
      title: `M${id}`,
      depends_on: [],
      goal: '',
      validation: [
        { text: `m${id} passes`, check: `npm run m${id}` },
        { text: 'tests pass', check: 'npm test' },
      ],
      tasks: [
        {
          id: 1,
          slug: 't1',
          title: 'T1',
          depends_on: [],
          scope: '',
          owns: [],
          interfaces: '',
          validation_method: '',
          validation: [{ text: `task ${id}.1`, check: `node t${id}.js` }],
          evidence: '',
        },
      ],
    })),
  } as unknown as Plan;

  test('is judged per stacked PR by its milestone’s checks and those below it, each command once', () => {
    const checks = fixChecks(plan, [
      { number: 7, milestone: 1 },
      { number: 8, milestone: 2 },
    ]);
    expect(checks['7']!.map((c) => c.check)).toEqual(['npm run m1', 'npm test', 'node t1.js']);
    expect(checks['8']!.map((c) => c.check)).toEqual([
      'npm run m1',
      'npm test',
      'node t1.js',
      'npm run m2',
      'node t2.js',
    ]);
    // The one PR of `pr: single`: the exit criteria a command can check.
    expect(fixChecks(plan, [{ number: 9, milestone: null }])['9']).toEqual([
      { text: 'tests pass', check: 'npm test' },
    ]);
  });

  test('carries the request as its scope, must change files, and always has a check', () => {
    const work = { kind: 'review' as const, pr: 7, comment: comment(1), request: 'Fix it' };
    const spec = fixTaskSpec(work, 3, [{ text: 'tests pass', check: 'npm test' }]);
    expect(spec).toMatchObject({
      id: 3,
      slug: 'review-fix-3',
      title: 'Fix review comment on src/greet.ts:3',
      scope: 'Fix it',
      requires_changes: true,
      validation: [{ text: 'tests pass', check: 'npm test' }],
    });
    const ciWork = {
      kind: 'ci' as const,
      pr: 7,
      check: check('lint', 'failure'),
      sha: 'a',
      fingerprint: 'f',
      request: 'r',
    };
    const bare = fixTaskSpec(ciWork, 1, []);
    expect(bare).toMatchObject({ slug: 'ci-fix-1', title: 'Fix CI check lint' });
    expect(bare.validation).toEqual([{ text: 'the branch is a git work tree', check: 'git status --short' }]);
  });
});
