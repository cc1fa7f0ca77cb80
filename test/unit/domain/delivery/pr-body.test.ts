import {
  mergePrBody,
  PR_BODY_BEGIN,
  PR_BODY_END,
  renderPrBody,
  sagaPrBody,
  type PrBodyInput,
} from '../../../../src/domain/delivery/pr-body';
import { DeliveryConfigSchema, forgeTarget } from '../../../../src/domain/delivery/delivery-config';
import { mergeSteps, prStack } from '../../../../src/domain/delivery/stack';
import type { MilestoneState } from '../../../../src/domain/contract/state';
import type { Plan } from '../../../../src/domain/plan';
import { prClosingLine } from '../../../../src/domain/tracker/workpad-text';

const input: PrBodyInput = {
  saga: 'add-greeting',
  goal: 'Add a greeting | with a pipe',
  milestone: { id: 2, title: 'The CLI' },
  stackedOn: 41,
  exitCriteria: [
    { id: 'E1', text: 'greet prints hello', result: 'passed' },
    { id: 'E2', text: 'docs list it', result: null },
    { id: 'E3', text: 'works on Windows', result: 'by-hand' },
  ],
  tasks: [{ id: '2.1', title: 'Wire the command', agent: 'claude', status: 'integrated' }],
  costUsd: 1.234,
  boardUrl: 'http://127.0.0.1:3100/#/saga/add-greeting',
  closes: 'Closes #12',
};

describe('a saga PR’s body', () => {
  test('carries the exit criteria as a checklist with results, the tasks, cost, board and Closes', () => {
    const body = renderPrBody(input);
    expect(body).toContain('## Saga `add-greeting`: milestone 2, The CLI');
    expect(body).toContain('Stacked on #41');
    expect(body).toContain('- [x] E1: greet prints hello (passed)');
    expect(body).toContain('- [ ] E2: docs list it (not checked yet)');
    expect(body).toContain('- [ ] E3: works on Windows (to verify by hand)');
    expect(body).toContain('| 2.1 Wire the command | claude | integrated |');
    expect(body).toContain('Add a greeting \\| with a pipe');
    expect(body).toContain('Cost so far: $1.23');
    expect(body).toContain('Closes #12');
  });

  test('is updated in place: what people wrote outside the markers stays', () => {
    const first = mergePrBody('', renderPrBody(input));
    expect(first.startsWith(PR_BODY_BEGIN)).toBe(true);
    const edited = `Reviewer notes: look at greet.ts\n\n${first}\n\nMore notes`;
    const next = renderPrBody({
      ...input,
      exitCriteria: [{ id: 'E1', text: 'greet prints hello', result: 'failed' }],
    });
    const merged = mergePrBody(edited, next);
    expect(merged).toContain('Reviewer notes: look at greet.ts');
    expect(merged).toContain('More notes');
    expect(merged).toContain('- [ ] E1: greet prints hello (failed)');
    expect(merged).not.toContain('(passed)');
    expect(mergePrBody('Hand-written body', next)).toBe(`${next}\n\nHand-written body`);
  });
});

describe('a saga PR’s body from the plan and the saga’s state (sagaPrBody)', () => {
  const task = (id: number, title: string, agent?: string) => ({ id, title, ...(agent ? { agent } : {}) });
  const plan = {
    exit_criteria: [
      { id: 'E1', text: 'greet prints hello', check: 'npm test' },
      { id: 'E2', text: 'reads well', check: 'true', by_hand: true },
    ],
    milestones: [
      { id: 1, title: 'The library', tasks: [task(1, 'Write greet'), task(2, 'Test greet', 'codex')] },
      { id: 2, title: 'The CLI', tasks: [task(1, 'Wire the command')] },
    ],
  } as unknown as Plan;
  // Milestone 1 integrated (its landed tasks left for its record), milestone 2 with one task running.
  const milestones = [
    { id: 1, status: 'integrated', tasks: [] },
    { id: 2, status: 'running', tasks: [{ id: '2.1', status: 'running' }] },
  ] as unknown as MilestoneState[];
  const base = {
    saga: 'add-greeting',
    goal: 'Add a greeting',
    plan,
    milestones,
    defaultAgent: 'claude',
    costUsd: 0.5,
    boardUrl: null,
  };

  test('a stacked PR shows its milestone’s tasks only, with their agents and states', () => {
    const body = sagaPrBody({ ...base, milestone: 1, exitResults: null, stackedOn: null });
    expect(body).toContain('## Saga `add-greeting`: milestone 1, The library');
    expect(body).toContain('| 1.1 Write greet | claude | integrated |');
    expect(body).toContain('| 1.2 Test greet | codex | integrated |');
    expect(body).not.toContain('Wire the command');
    expect(body).not.toContain('Stacked on');
    expect(body).toContain('- [ ] E1: greet prints hello (not checked yet)');
    const second = sagaPrBody({ ...base, milestone: 2, exitResults: null, stackedOn: 7 });
    expect(second).toContain('Stacked on #7');
    expect(second).toContain('| 2.1 Wire the command | claude | running |');
  });

  test('the one PR of `pr: single` shows every milestone; the exit criteria carry the final results', () => {
    const body = sagaPrBody({
      ...base,
      milestone: null,
      exitResults: [
        { id: 'E1', result: 'passed' },
        { id: 'E2', result: 'by-hand' },
      ],
      stackedOn: null,
    });
    expect(body).toContain('## Saga `add-greeting`\n');
    expect(body).toContain('| 1.1 Write greet | claude | integrated |');
    expect(body).toContain('| 2.1 Wire the command | claude | running |');
    expect(body).toContain('- [x] E1: greet prints hello (passed)');
    expect(body).toContain('- [ ] E2: reads well (to verify by hand)');
    expect(body).toContain('Cost so far: $0.50');
  });

  test('a saga from an issue: the closing line inside the saga’s part, on the PR that lands it all', () => {
    const source = {
      ref: { kind: 'gitea' as const, owner: 'alice', repo: 'demo', number: 3 },
      url: 'http://127.0.0.1:3000/alice/demo/issues/3',
      title: 'Add a greeting',
      request: '',
    };
    const target = forgeTarget({
      kind: 'gitea',
      url: 'http://127.0.0.1:3000',
      repo: 'alice/demo',
      remote: 'origin',
      token_env: 'GITEA_TOKEN',
    });
    const body = sagaPrBody({
      ...base,
      milestone: 2,
      exitResults: null,
      stackedOn: 7,
      closes: prClosingLine(source, target, true),
    });
    const inside = body.slice(body.indexOf(PR_BODY_BEGIN), body.indexOf(PR_BODY_END));
    expect(inside).toContain('\nCloses #3\n');
    expect(body.endsWith(`Closes #3\n${PR_BODY_END}`)).toBe(true);
    // Replaced in place like the rest of the saga's part, so a moved top of the stack drops it below.
    const lower = sagaPrBody({
      ...base,
      milestone: 1,
      exitResults: null,
      stackedOn: null,
      closes: prClosingLine(source, target, false),
    });
    expect(mergePrBody(body, lower)).not.toContain('Closes');
    const linear = { ...source, ref: { kind: 'linear' as const, team: 'ENG', number: 42 } };
    expect(
      sagaPrBody({
        ...base,
        milestone: null,
        exitResults: null,
        stackedOn: null,
        closes: prClosingLine(linear, target, true),
      }),
    ).toContain('\nFixes ENG-42\n');
    expect(prClosingLine(undefined, target, true)).toBeNull();
    expect(sagaPrBody({ ...base, milestone: 1, exitResults: null, stackedOn: null })).not.toMatch(
      /Closes|Fixes/,
    );
  });

  test('a task the saga has no state for yet is pending', () => {
    const body = sagaPrBody({ ...base, milestones: [], milestone: 2, exitResults: null, stackedOn: null });
    expect(body).toContain('| 2.1 Wire the command | claude | pending |');
  });
});

describe('the delivery settings', () => {
  test('default to the local ending; `delivery: pr` needs a forge, a Gitea forge its url', () => {
    expect(DeliveryConfigSchema.parse({})).toMatchObject({
      delivery: 'local',
      ci_fix_attempts: 2,
      auto_merge: false,
    });
    const noForge = DeliveryConfigSchema.safeParse({ delivery: 'pr' });
    expect(noForge.success).toBe(false);
    expect(JSON.stringify(noForge.error?.issues)).toContain('`delivery: pr` needs a `forge:`');
    const gitea = DeliveryConfigSchema.safeParse({
      delivery: 'pr',
      forge: { kind: 'gitea', repo: 'alice/demo', token_env: 'GITEA_TOKEN' },
    });
    expect(JSON.stringify(gitea.error?.issues)).toContain(
      'a Gitea forge needs its url (its web root, e.g. https://git.example.com)',
    );
  });

  test('name the forge target; a token itself in the config is refused', () => {
    const config = DeliveryConfigSchema.parse({
      delivery: 'pr',
      forge: { kind: 'github', repo: 'acme/app', token_env: 'GITHUB_TOKEN' },
    });
    expect(forgeTarget(config.forge!)).toEqual({
      kind: 'github',
      url: 'https://api.github.com',
      owner: 'acme',
      repo: 'app',
      tokenEnv: 'GITHUB_TOKEN',
    });
    const token = DeliveryConfigSchema.safeParse({
      forge: { kind: 'github', repo: 'acme/app', token_env: 'ghp_abc123secret' },
    });
    expect(token.success).toBe(false);
  });
});

describe('the PR stack', () => {
  const saga = { name: 'add-greeting', base: 'main' };
  test('stacks one PR per integrated milestone, or proposes the integration branch once', () => {
    expect(prStack(saga, [1, 2], 'stacked')).toEqual([
      { milestone: 1, head: 'saga/add-greeting/deliver-m1', base: 'main' },
      { milestone: 2, head: 'saga/add-greeting/deliver-m2', base: 'saga/add-greeting/deliver-m1' },
    ]);
    expect(prStack(saga, [1, 2], 'single')).toEqual([
      { milestone: null, head: 'saga/add-greeting/integration', base: 'main' },
    ]);
    expect(prStack(saga, [], 'single')).toEqual([]);
  });

  test('merges down the stack, retargeting each next PR to the base branch first', () => {
    expect(
      mergeSteps(
        [
          { number: 7, base: 'main' },
          { number: 8, base: 'saga/add-greeting/deliver-m1' },
        ],
        'main',
      ),
    ).toEqual([{ merge: 7 }, { retarget: 8, to: 'main' }, { merge: 8 }]);
  });
});
