import {
  mergePrBody,
  PR_BODY_BEGIN,
  renderPrBody,
  type PrBodyInput,
} from '../../../../src/domain/delivery/pr-body';
import { DeliveryConfigSchema, forgeTarget } from '../../../../src/domain/delivery/delivery-config';
import { mergeSteps, prStack } from '../../../../src/domain/delivery/stack';

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
  closes: '#12',
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
