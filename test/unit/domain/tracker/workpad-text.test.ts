import type { ForgeTarget } from '../../../../src/domain/delivery/forge-shapes';
import type { IntakeSource } from '../../../../src/domain/tracker/issue';
import { WORKPAD_MARKER, type Workpad } from '../../../../src/domain/tracker/workpad';
import { closingReference, renderWorkpad } from '../../../../src/domain/tracker/workpad-text';

const ESC = '\x1b';
const source: IntakeSource = {
  ref: { kind: 'gitea', owner: 'alice', repo: 'demo', number: 3 },
  url: 'http://127.0.0.1:3000/alice/demo/issues/3',
  title: 'Add a greeting',
  request: '(the request)',
};

const workpad: Workpad = {
  sagaName: 'gitea-alice-demo-3',
  phase: 'implementation',
  problem: `Users want a greeting.\nIt prints ${ESC}[31mhello${ESC}[0m. <!-- saga:workpad --> cc @org/team`,
  exitCriteria: [
    { id: 'E1', text: 'greet prints hello', result: 'passed' },
    { id: 'E2', text: 'docs | list it', result: null },
  ],
  milestones: [
    {
      id: 1,
      title: 'Core',
      status: 'integrated',
      tasks: [{ key: 'm1t1', title: `Add greet()\n| evil | row |`, status: 'integrated', agent: 'claude' }],
    },
    {
      id: 2,
      title: 'CLI',
      status: 'pending',
      tasks: [{ key: 'm2t1', title: 'Wire it', status: 'pending', agent: null }],
    },
  ],
  pullRequests: [{ number: 5, url: 'http://127.0.0.1:3000/alice/demo/pulls/5', milestone: 1, state: 'open' }],
  costUsd: 1.234,
  uiUrl: 'http://localhost:8233/namespaces/default/workflows/saga-gitea-alice-demo-3',
};

describe('renderWorkpad', () => {
  const text = renderWorkpad(workpad, source);

  test('starts with the marker and shows phase, restatement, criteria, milestones, PRs, cost and the Web UI', () => {
    expect(text.startsWith(`${WORKPAD_MARKER}\n`)).toBe(true);
    expect(text).toContain('### Saga `gitea-alice-demo-3`: implementing');
    expect(text).toContain('Working on gitea:alice/demo#3: Add a greeting.');
    expect(text).toContain('**Restatement:** Users want a greeting. It prints hello.');
    expect(text).toContain('- [x] E1: greet prints hello (passed)');
    expect(text).toContain('- [ ] E2: docs \\| list it (not checked yet)');
    expect(text).toContain('| **1** | **Core** | integrated | |');
    expect(text).toContain('| m2t1 | Wire it | pending |  |');
    expect(text).toContain(
      '**Pull requests:** [#5](http://127.0.0.1:3000/alice/demo/pulls/5) (milestone 1, open)',
    );
    expect(text).toContain(
      'Phase: `saga:implementation` · cost so far $1.23 · [Web UI](http://localhost:8233/',
    );
  });

  test('agent-written text is made safe: no escapes, one line per cell, no second marker, no mentions', () => {
    expect(text).not.toContain(ESC);
    expect(text.indexOf('<!--')).toBe(0);
    expect(text.split(WORKPAD_MARKER)).toHaveLength(2);
    expect(text).toContain('&lt;!-- saga:workpad -->');
    expect(text).not.toMatch(/@org/);
    expect(text).toContain('@\u200borg/team');
    // The task title's newline and pipes stay inside its cell: every table row has 5 unescaped pipes.
    for (const row of text.split('\n').filter((l) => l.startsWith('| '))) {
      expect(row.replace(/\\\|/g, '').split('|')).toHaveLength(6);
    }
  });

  test('a workpad at planning is short: no empty sections', () => {
    const early = renderWorkpad(
      {
        ...workpad,
        phase: 'planning',
        problem: null,
        exitCriteria: [],
        milestones: [],
        pullRequests: [],
        uiUrl: null,
        costUsd: 0,
      },
      source,
    );
    expect(early).not.toMatch(/Exit criteria|Milestones|Pull requests|Restatement|Web UI/);
    expect(early).toContain('Phase: `saga:planning` · cost so far $0.00');
  });

  test('a link that is not http(s) is not linked', () => {
    const odd = renderWorkpad({ ...workpad, uiUrl: 'javascript:alert(1)' }, source);
    expect(odd).toContain('[Web UI](#)');
  });
});

describe('closingReference', () => {
  const forge = (over: Partial<ForgeTarget> = {}): ForgeTarget => ({
    kind: 'gitea',
    url: 'http://127.0.0.1:3000',
    owner: 'alice',
    repo: 'demo',
    tokenEnv: 'GITEA_TOKEN',
    ...over,
  });

  test('the issue’s own repository: Closes #N (names compared without case)', () => {
    expect(closingReference(source, forge())).toBe('Closes #3');
    expect(closingReference(source, forge({ owner: 'Alice', repo: 'Demo' }))).toBe('Closes #3');
  });

  test('another repository of the same forge kind: Closes OWNER/REPO#N', () => {
    expect(closingReference(source, forge({ repo: 'other' }))).toBe('Closes alice/demo#3');
    const github: IntakeSource = {
      ...source,
      ref: { kind: 'github', owner: 'acme', repo: 'app', number: 9 },
    };
    expect(closingReference(github, forge({ kind: 'github', owner: 'acme', repo: 'web' }))).toBe(
      'Closes acme/app#9',
    );
  });

  test('Linear: its key', () => {
    const linear: IntakeSource = { ...source, ref: { kind: 'linear', team: 'ENG', number: 42 } };
    expect(closingReference(linear, forge({ kind: 'github' }))).toBe('Fixes ENG-42');
    expect(closingReference(linear, null)).toBe('Fixes ENG-42');
  });

  test('another kind of forge, or none: a link, no closing keyword', () => {
    expect(closingReference(source, forge({ kind: 'github' }))).toBe(
      'Issue: gitea:alice/demo#3 (http://127.0.0.1:3000/alice/demo/issues/3)',
    );
    expect(closingReference(source, null)).toMatch(/^Issue: gitea:alice\/demo#3/);
  });
});
