/** The programs a plan's checks run, found at plan approval (src/domain/plan/check-programs.ts). */
import {
  checkPrograms,
  ownedByPlan,
  planChecks,
  unresolvedCheckLines,
} from '../../../../src/domain/plan/check-programs';
import { validatePlan } from '../../../../src/domain/plan';
import { greetingPlan } from '../../../../src/demo/sample-repo';

describe('checkPrograms', () => {
  test.each([
    ['node --test test/greet.test.js', ['node']],
    ['npm test && npx jest x', ['npm', 'npx']],
    ['FOO=1 BAR="a b" ./scripts/check.sh --fast 2>&1 | grep -q ok', ['./scripts/check.sh', 'grep']],
    ['test -f a && [ -x b ] || echo no', []],
    ['cd web; pnpm build > /tmp/out.log', ['pnpm']],
    ['if kiosk-tool --ping; then echo up; else false; fi', ['kiosk-tool']],
    ['for f in a b; do shellcheck "$f"; done', ['shellcheck']],
    ['"$TOOL" run; `which x` y', []],
    ["'my tool' --flag &> log", ['my tool']],
    ['(cd a && make) ; ! curl -s x', ['make', 'curl']],
    ['node a.js; node b.js', ['node']],
  ])('%s', (command, programs) => {
    expect(checkPrograms(command)).toEqual(programs);
  });
});

describe('plan checks', () => {
  const result = validatePlan(greetingPlan(), 'greeting.yaml');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  const plan = result.plan;

  test('every check with where it is', () => {
    expect(planChecks(plan).map((c) => c.where)).toEqual([
      'exit criterion E1',
      'exit criterion E2',
      'milestone 1 validation',
      'task 1.1',
      'task 1.2',
      'milestone 2 validation',
      'task 2.1',
    ]);
  });

  test('a program some task owns is created by the plan', () => {
    expect(ownedByPlan(plan, './bin/greet.js')).toBe(true);
    expect(ownedByPlan(plan, 'scripts/x.sh')).toBe(false);
    expect(ownedByPlan(plan, '/usr/bin/greet.js')).toBe(false);
  });

  test('the approval lines name each unresolved check', () => {
    expect(unresolvedCheckLines([])).toEqual([]);
    expect(
      unresolvedCheckLines([
        { where: 'task 1.1', check: 'kiosk --x', program: 'kiosk', why: 'is not on PATH' },
      ]),
    ).toEqual([
      'Warning: 1 check cannot run here (their program is missing); approved as they are, each would fail with exit 127 and be put to you then. Revise to fix them:',
      '- task 1.1: `kiosk --x`: kiosk is not on PATH',
    ]);
  });
});
