import * as fs from 'fs';
import * as path from 'path';
import fc from 'fast-check';
import { renderReportMd } from '../../../../src/domain/record/completion-report';
import type { Environment } from '../../../../src/domain/planning/environment';
import type { FlagsResult } from '../../../../src/domain/contract/flags-result';
import { initialMilestones } from '../../../../src/domain/fleet/fleet';
import { parseManifest, renderManifest, type ManifestFront } from '../../../../src/domain/record/manifest';
import type { Plan } from '../../../../src/domain/plan';
import { parsePlanText } from '../../../../src/domain/plan/parse-text';
import {
  renderDecisionEntry,
  renderMilestoneMd,
  renderProgressMd,
  renderSagaMd,
  renderTaskMd,
} from '../../../../src/domain/record/render';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { PROJECT_ROOT } from '../../../../src/project-root';

function loadPlan(): Plan {
  const result = parsePlanText(
    fs.readFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'plans', 'greeting.yaml'), 'utf8'),
    'greeting.yaml',
  );
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.plan;
}

const flags: FlagsResult = {
  quality_locked: true,
  autonomous: true,
  subagents: false,
  parallel: false,
  goal: 'Add a greeting',
  error: null,
  quality_locked_source: 'config',
  autonomous_source: 'flag',
  subagents_source: null,
  parallel_source: null,
  parallel_lanes: 0,
  parallel_note: null,
};

function statusFor(plan: Plan): SagaStatus {
  const status: SagaStatus = {
    name: 'add-greeting',
    workflowId: 'saga-add-greeting',
    phase: 'implementation',
    goal: 'Add a greeting',
    repo: '/repos/my app',
    flags,
    executionMode: 'inline',
    pending: [],
    milestones: initialMilestones('add-greeting', plan),
    integrationBranch: 'saga/add-greeting/integration',
    sagaDir: '/home/u/.sagas/add-greeting',
    uiUrl: 'http://localhost:8233/namespaces/default/workflows/saga-add-greeting',
    round: 1,
    log: ['second event', 'first event'],
  };
  const [t11, t12] = status.milestones[0].tasks;
  Object.assign(t11, {
    status: 'passed',
    commit: '0123456789abcdef0123',
    attempts: 1,
    evidence: ['runs/m1t1/validation-1.txt'],
    changedFiles: ['src/greet.js', 'test/greet.test.js'],
  });
  Object.assign(t12, {
    status: 'running',
    attempts: 1,
    workflowId: 'saga-add-greeting-m1t2',
    runId: 'run-42',
    worktree: '/repos/saga-add-greeting-m1t2',
  });
  status.milestones[0].status = 'running';
  return status;
}

const environment: Environment = {
  programType: 'CLI/library',
  programTypeReason: 'package.json has bin and no server',
  languages: ['JavaScript'],
  commands: [
    {
      purpose: 'test',
      argv: ['npm', 'test'],
      source: 'package.json scripts.test',
      confirmed: 'passed',
      exitCode: 0,
      durationMs: 900,
      outputPath: 'runs/discovery/test.txt',
    },
  ],
  launch: 'node bin/greet.js Ada',
  computerUse: 'not available',
  notes: ['No linter configured'],
};

describe('SAGA.md', () => {
  test('has the problem, environment, exit criteria and a linked milestone index', () => {
    const plan = loadPlan();
    const md = renderSagaMd({
      name: 'add-greeting',
      status: statusFor(plan),
      plan,
      environment,
      flagsAnnouncement: 'Saga → saga workflow.\nModes: --quality-locked, --autonomous',
    });
    for (const heading of [
      '# Saga: add-greeting',
      '## Problem statement',
      '## Scope and non-goals',
      '### Out of scope (non-goals)',
      '## Flags',
      '## Environment',
      '## Exit criteria',
      '## Milestone index',
    ]) {
      expect(md).toContain(`\n${heading}\n`.slice(heading.startsWith('# ') ? 1 : 0));
    }
    expect(md).toContain('- Localisation');
    expect(md).toContain('Modes: --quality-locked, --autonomous');
    expect(md).toContain('- **Program type:** CLI/library — package.json has bin and no server');
    expect(md).toContain(
      '| test | `npm test` | package.json scripts.test | passed (exit 0) — output: runs/discovery/test.txt |',
    );
    expect(md).toContain('| E2 | The CLI prints the greeting | `node --test test/cli.test.js` |');
    expect(md).toContain(
      '| 2 | Command-line entry point | M1 | 2.1 | pending | [milestones/02-cli/MILESTONE.md](milestones/02-cli/MILESTONE.md) |',
    );
    expect(md).toContain('| 1 | Core library | — | 1.1, 1.2 | running |');
    expect(md).not.toContain('Recommendation Rationale');
  });

  test('carries the autonomous rationale block when the plan has one', () => {
    const plan = {
      ...loadPlan(),
      rationale: ['**Module format:** CommonJS — codebase pattern: src/*.js use require'],
      tradeoffs: { short_term: 'no ESM', long_term: 'migration later', balance: 'matches the repo today' },
    };
    const md = renderSagaMd({
      name: 'add-greeting',
      status: statusFor(plan),
      plan,
      environment: null,
      flagsAnnouncement: '',
    });
    const block = md.slice(md.indexOf('## Recommendation Rationale'), md.indexOf('## Problem statement'));
    expect(block).toBe(
      [
        '## Recommendation Rationale',
        '',
        'This artifact was produced with `--autonomous`. Key decisions:',
        '',
        '- **Module format:** CommonJS — codebase pattern: src/*.js use require',
        '',
        '**Tradeoffs accepted:**',
        '- Short-term: no ESM',
        '- Long-term: migration later',
        '- Why this is the right balance: matches the repo today',
        '',
        '**Decisions asked back to user:** None',
        '',
        '',
      ].join('\n'),
    );
    expect(md).toContain('## Environment\n\nNot discovered yet.');
  });

  test('table cells escape pipes and stay on one line', () => {
    const plan = loadPlan();
    plan.exit_criteria[0].text = 'a | b\nc';
    const md = renderSagaMd({ name: 'x', status: null, plan, environment: null, flagsAnnouncement: '' });
    expect(md).toContain('| E1 | a \\| b c |');
  });
});

describe('MILESTONE.md and task specs', () => {
  test('milestone lists goal, validation and its tasks with status and spec links', () => {
    const plan = loadPlan();
    const status = statusFor(plan);
    const md = renderMilestoneMd(plan.milestones[0], status.milestones[0]);
    expect(md).toContain('# Milestone 1: Core library');
    expect(md).toContain('- **Status:** running');
    expect(md).toContain('## Goal\n\nA tested greet(name) function.');
    expect(md).toContain('- greet unit tests pass — check: `node --test test/greet.test.js`');
    expect(md).toContain(
      '| 1.2 | Default name | 1.1 | `test/greet-default.test.js` | running | [tasks/02-greet-default.md](tasks/02-greet-default.md) |',
    );
  });

  test('task spec has scope, owned files, interfaces, dependencies, validation and evidence', () => {
    const plan = loadPlan();
    const status = statusFor(plan);
    const md = renderTaskMd(1, plan.milestones[0].tasks[0], status.milestones[0].tasks[0]);
    expect(md).toContain('# Task 1.1: Add greet()');
    expect(md).toContain('- **Status:** passed');
    expect(md).toContain('- **Branch:** `saga/add-greeting/m1t1-add-greet`');
    expect(md).toContain('- **Commit:** `0123456789ab`');
    for (const heading of [
      'Scope',
      'Owned files',
      'Interfaces',
      'Dependencies',
      'Validation method',
      'Validation criteria',
      'Evidence required',
      'Evidence collected',
    ]) {
      expect(md).toContain(`\n## ${heading}\n`);
    }
    expect(md).toContain('- `src/greet.js`\n- `test/greet.test.js`');
    expect(md).toContain('- runs/m1t1/validation-1.txt');
    const unstarted = renderTaskMd(1, plan.milestones[0].tasks[1], null);
    expect(unstarted).toContain('- **Branch:** not created yet');
    expect(unstarted).toContain('## Dependencies\n\n- Task 1.1');
  });
});

describe('PROGRESS.md', () => {
  test('phase, current milestone, task lines, open questions, notes and a newest-first log', () => {
    const plan = loadPlan();
    const status = statusFor(plan);
    status.pending.push({
      id: 'q1',
      kind: 'question',
      prompt: 'Which greeting?',
      options: ['Hello', 'Hi'],
      recommended: 0,
      textRequiredFor: [],
      owner: 'saga-add-greeting',
      openedAt: '2026-01-01T00:00:00Z',
    });
    const md = renderProgressMd(status, {
      integrationNotes: ['M1 merged cleanly'],
      decisions: ['Dropped i18n'],
    });
    expect(md).toContain('- **Phase:** implementation');
    expect(md).toContain('- **Current milestone:** 1 — Core library (running)');
    expect(md).toContain(
      '- [x] 1.1 add-greet — passed · branch `saga/add-greeting/m1t1-add-greet` · commit `0123456789ab` · ' +
        'attempts 1 · evidence: runs/m1t1/validation-1.txt',
    );
    expect(md).toContain(
      '- [~] 1.2 greet-default — running · branch `saga/add-greeting/m1t2-greet-default` · attempts 1 · ' +
        'workflow `saga-add-greeting-m1t2` run `run-42` · worktree `/repos/saga-add-greeting-m1t2`',
    );
    // A finished task keeps its worker's ids: workflow and run, agent and session, where it worked.
    Object.assign(status.milestones[0].tasks[0], {
      workflowId: 'saga-add-greeting-m1t1',
      runId: 'run-7',
      worktree: '/repos/saga-add-greeting-m1t1',
      agent: { profile: 'claude', sessionId: 'sess-1' },
    });
    expect(renderProgressMd(status, { integrationNotes: [], decisions: [] })).toContain(
      'evidence: runs/m1t1/validation-1.txt · workflow `saga-add-greeting-m1t1` run `run-7` · ' +
        'agent `claude` session `sess-1` · worktree `/repos/saga-add-greeting-m1t1` (removed after its handoff)',
    );
    expect(md).toContain('## Reconciliation\n\nNot reconciled yet (saga continue does it).');
    status.reconciliation = {
      at: '2026-01-01T00:00:00.000Z',
      checked: { tasks: 3, evidenceFiles: 1 },
      findings: [
        { task: '1.1', text: "recorded as integrated but not merged into 'saga/add-greeting/integration'" },
        { task: null, text: "worktree '/x' (branch 'saga/add-greeting/m9t9-x') belongs to no known task" },
      ],
    };
    const reconciled = renderProgressMd(status, { integrationNotes: [], decisions: [] });
    expect(reconciled).toContain(
      '## Reconciliation\n\nsaga continue at 2026-01-01T00:00:00.000Z found 2 difference(s) between the record ' +
        'and reality (3 task(s), 1 evidence file(s) checked):\n\n' +
        "- Task 1.1: recorded as integrated but not merged into 'saga/add-greeting/integration'\n" +
        "- worktree '/x' (branch 'saga/add-greeting/m9t9-x') belongs to no known task\n",
    );
    expect(reconciled).toContain(
      "(removed after its handoff) · reconciliation: recorded as integrated but not merged into 'saga/add-greeting/integration'",
    );
    expect(md).toContain(
      '## Open questions\n\n- **q1** (question): Which greeting? — options: [0] Hello (recommended), [1] Hi',
    );
    expect(md).toContain('## Integration notes\n\n- M1 merged cleanly');
    expect(md).toContain('## Decisions & Deviations\n\n- Dropped i18n');
    // status.log is newest first already; a whole log given by the caller replaces it.
    expect(md).toContain('## Log (newest first)\n\n- second event\n- first event');
    const whole = renderProgressMd(status, { integrationNotes: [], decisions: [], log: ['c', 'b', 'a'] });
    expect(whole).toContain('## Log (newest first)\n\n- c\n- b\n- a\n');
  });
});

describe('REPORT.md', () => {
  test('what was built, each exit criterion with result and evidence, and manual steps', () => {
    const plan = loadPlan();
    const status = statusFor(plan);
    status.milestones[0].integrationCommit = 'fedcba9876543210';
    const md = renderReportMd({
      status,
      plan,
      environment,
      exitResults: [
        { id: 'E1', result: 'passed', evidence: 'runs/validation/E1.txt', summary: '3 tests passed' },
      ],
      manualSteps: ['Check the greeting says "Hello, Ada!"'],
    });
    expect(md).toContain('- **Exit criteria passed:** 1 of 2');
    expect(md).toContain('### Milestone 1: Core library — running');
    expect(md).toContain(
      '0 tasks of 2 landed on the integration branch (integration commit `fedcba987654`).',
    );
    expect(md).toContain(
      '- **1.1 Add greet()** (passed, `0123456789ab`): changed `src/greet.js`, `test/greet.test.js`.',
    );
    expect(md).toContain(
      '| E1 | greet() returns the greeting | `node --test test/greet.test.js` | **passed** | ' +
        '[runs/validation/E1.txt](runs/validation/E1.txt) | 3 tests passed |',
    );
    expect(md).toContain(
      '| E2 | The CLI prints the greeting | `node --test test/cli.test.js` | not run | — | — |',
    );
    expect(md).toContain(
      "1. Check out the integrated result beside your repo (your own checkout is not touched): `git -C '/repos/my app' " +
        "worktree add '/repos/my app-verify' saga/add-greeting/integration`, then `cd '/repos/my app-verify'`",
    );
    expect(md).toContain(
      '2. E1 — greet() returns the greeting: run `node --test test/greet.test.js` and expect exit code 0. ' +
        "The saga's run: passed, 3 tests passed.",
    );
    expect(md).toContain(
      '3. E2 — The CLI prints the greeting: run `node --test test/cli.test.js` and expect exit code 0.\n',
    );
    expect(md).toContain(
      '4. Launch the program with `node bin/greet.js Ada` and try the feature: Add a greeting',
    );
    expect(md).toContain('5. Check the greeting says "Hello, Ada!"');
    expect(md).toContain(
      "6. Remove the checkout when done: `git -C '/repos/my app' worktree remove '/repos/my app-verify'`",
    );
  });

  test("each criterion's evidence: the check, where it ran, and the end of its output", () => {
    const plan = loadPlan();
    const output = `$ node --test test/greet.test.js\n${Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n')}\n# pass 3\n`;
    const md = renderReportMd({
      status: statusFor(plan),
      plan,
      exitResults: [{ id: 'E1', result: 'passed', evidence: '/s/runs/validation-r1/check-1.log', output }],
      checkout: { copy: ['.env'], setup: [['npm', 'ci']] },
      verifyPath: '/repos/saga-add-greeting-verify',
    });
    expect(md).toContain(
      '### E1: greet() returns the greeting — passed\n\n' +
        '- **Check:** `node --test test/greet.test.js`, run in a fresh checkout of `saga/add-greeting/integration` ' +
        '(exit code 0 means met)\n' +
        '- **Evidence:** [/s/runs/validation-r1/check-1.log](/s/runs/validation-r1/check-1.log)\n\n' +
        'Output (its end):\n\n```text\n… (6 earlier line(s) in the evidence file)\nline 7\n',
    );
    expect(md).toContain('line 20\n# pass 3\n```');
    expect(md).not.toContain('$ node --test');
    // The table summarises it with the runner's result line; the steps prepare the checkout as the saga does.
    expect(md).toContain(
      '| **passed** | [/s/runs/validation-r1/check-1.log](/s/runs/validation-r1/check-1.log) | # pass 3 |',
    );
    expect(md).toContain(
      "2. Copy `.env` from your repo, as the saga's checkouts get it: `cp -R '/repos/my app/.env' .env`",
    );
    expect(md).toContain('3. Set the checkout up: `npm ci`');
    expect(md).toContain('worktree add /repos/saga-add-greeting-verify saga/add-greeting/integration');
  });
});

describe('manifest.md', () => {
  const front: ManifestFront = {
    saga: 'add-greeting',
    flags: {
      quality_locked: true,
      autonomous: true,
      subagents: false,
      parallel: false,
      quality_locked_source: 'config',
      autonomous_source: 'flag',
      subagents_source: null,
      parallel_source: null,
      parallel_lanes: 0,
      parallel_note: null,
    },
    execution_mode: 'inline (subagents-unavailable)',
    auto_picked_checkpoints: [
      {
        phase: 'plan',
        checkpoint: 'plan-approval',
        decision: 'A',
        timestamp: '2026-05-15T14:23:18Z',
        reason: '--autonomous --quality-locked both active',
        flag_sources: { quality_locked: 'config', autonomous: 'flag' },
      },
    ],
    autonomous_decisions: [{ phase: 'planning', decided: 4, asked: 1, sources: { memory: 2, codebase: 2 } }],
    quality_locked_history: [
      {
        subject: 'plan',
        iteration: 1,
        counts: { critical: 0, major: 1, substantive: 0, cosmetic: 2 },
        result: 'REVISE',
        findings: 'runs/review-plan-i1.md',
      },
    ],
  };

  test('renders YAML front matter between --- lines and parses back to the same value', () => {
    const text = renderManifest(front);
    expect(text.startsWith('---\nsaga: add-greeting\nflags:\n  quality_locked: true\n')).toBe(true);
    expect(text).toContain('\n---\n\n# Manifest: add-greeting\n');
    const parsed = parseManifest(text);
    expect(parsed.front).toEqual(front);
    expect(parseManifest(renderManifest(front, 'custom body\n')).body).toBe('custom body\n');
  });

  test('round-trips arbitrary text in string fields', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (saga, reason, mode) => {
        const value: ManifestFront = {
          ...front,
          saga,
          execution_mode: mode,
          auto_picked_checkpoints: [{ ...front.auto_picked_checkpoints[0], reason }],
        };
        expect(parseManifest(renderManifest(value, '\nbody\n'))).toEqual({ front: value, body: '\nbody\n' });
      }),
      { numRuns: 200 },
    );
  });

  test('a file without front matter, or with invalid front matter, is a clear error', () => {
    expect(() => parseManifest('# just markdown')).toThrow(
      'manifest.md: expected YAML front matter between "---" lines at the top',
    );
    expect(() => parseManifest('---\nsaga: x\n---\n')).toThrow(
      /manifest\.md: invalid front matter: flags: Required/,
    );
  });
});

describe('decision entries', () => {
  test('heading, then lines, timestamped in UTC', () => {
    expect(
      renderDecisionEntry({
        at: '2026-05-15T16:23:18+02:00',
        title: 'Auto-pick: [A] Review at spec checkpoint',
        lines: ['Flags active: --autonomous (flag), --quality-locked (config)', 'Effect: Triggered review'],
      }),
    ).toBe(
      '### 2026-05-15 14:23 — Auto-pick: [A] Review at spec checkpoint\n' +
        'Flags active: --autonomous (flag), --quality-locked (config)\nEffect: Triggered review\n',
    );
    expect(() => renderDecisionEntry({ at: 'yesterday', title: 't', lines: [] })).toThrow(/ISO timestamp/);
  });
});
