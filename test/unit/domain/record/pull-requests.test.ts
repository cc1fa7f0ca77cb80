/**
 * The saga's pull requests where a person reads them (src/domain/record/pull-requests.ts): `saga status`,
 * PROGRESS.md and REPORT.md show number and link, head → base, draft/ready, CI with the failing checks, the
 * fixes run and the comments listed with why; nothing changes for a saga without pull requests.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderStatus } from '../../../../src/client/commands/inspect';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { initialMilestones } from '../../../../src/domain/fleet/fleet';
import type { Plan } from '../../../../src/domain/plan';
import { parsePlanText } from '../../../../src/domain/plan/parse-text';
import { renderReportMd } from '../../../../src/domain/record/completion-report';
import { renderProgressMd } from '../../../../src/domain/record/progress-md';
import { pullRequestBullets, pullRequestStatusLines } from '../../../../src/domain/record/pull-requests';
import { parseFlags } from '../../../../src/domain/request/flags';
import { PROJECT_ROOT } from '../../../../src/project-root';
import { pullRequestPair, XSS_TEXT } from '../../../harness/pull-request-fixture';

function loadPlan(): Plan {
  const file = path.join(PROJECT_ROOT, 'test', 'fixtures', 'plans', 'greeting.yaml');
  const result = parsePlanText(readFileSync(file, 'utf8'), 'greeting.yaml');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.plan;
}

const plan = loadPlan();
const statusOf = (extra: Partial<SagaStatus> = {}): SagaStatus => ({
  name: 'demo',
  workflowId: 'saga-demo',
  phase: 'acceptance',
  goal: 'Add a greeting',
  repo: '/repos/app',
  flags: parseFlags('Add a greeting', {}),
  executionMode: 'inline',
  pending: [],
  milestones: initialMilestones('demo', plan),
  integrationBranch: 'saga/demo/integration',
  sagaDir: '/home/u/.sagas/demo',
  uiUrl: '',
  round: 1,
  log: [],
  ...extra,
});
const extra = { integrationNotes: [], decisions: [] };
const report = (status: SagaStatus) => renderReportMd({ status, plan, exitResults: [] });

describe('saga status', () => {
  test('each PR: number, milestone, head → base, stage, CI with failing checks, fixes, link, listed comments', () => {
    const text = renderStatus(statusOf({ pullRequests: pullRequestPair() }));
    expect(pullRequestStatusLines(pullRequestPair())).toEqual([
      'Pull requests:',
      '  #12 (milestone 1) saga/demo/deliver-m1 → main, ready, CI failing: lint, test (node 22), 1 CI fix, 2 review fixes',
      '    https://forge.example/alice/demo/pulls/12',
      '    comment by carol on src/a.ts:3: not acted on (no write access)',
      `    comment by ci-bot on README.md:1 ${XSS_TEXT}: not acted on (a bot)`,
      '  #13 (milestone 2) saga/demo/deliver-m2 → saga/demo/deliver-m1, draft, CI pending',
      '    https://forge.example/alice/demo/pulls/13',
    ]);
    expect(text).toContain(pullRequestStatusLines(pullRequestPair()).join('\n'));
  });

  test('merged, CI passed, no CI, and the one PR of `pr: single`', () => {
    const [pr] = pullRequestPair();
    const lines = pullRequestStatusLines([
      { ...pr!, milestone: null, state: 'merged', ci: 'success', failing: [], listedComments: [] },
      { ...pr!, number: 14, ci: 'no-ci', failing: [], ciFixes: 0, reviewFixes: 0, listedComments: [] },
    ]);
    expect(lines[1]).toBe(
      '  #12 (the saga) saga/demo/deliver-m1 → main, merged, CI passed, 1 CI fix, 2 review fixes',
    );
    expect(lines[3]).toBe('  #14 (milestone 1) saga/demo/deliver-m1 → main, ready, no CI reported');
  });

  test('terminal controls in forge text never reach the terminal', () => {
    const [pr] = pullRequestPair();
    const text = renderStatus(statusOf({ pullRequests: [{ ...pr!, failing: ['lint\u001b[2J'] }] }));
    expect(text).not.toContain('\u001b');
  });
});

describe('PROGRESS.md and REPORT.md', () => {
  test('a "Pull requests" section with a link per PR and its comments nested', () => {
    const bullets = pullRequestBullets(pullRequestPair());
    expect(bullets.split('\n')).toEqual([
      '- [#12](https://forge.example/alice/demo/pulls/12) (milestone 1): `saga/demo/deliver-m1` → `main` · ready · CI failing: lint, test (node 22) · 1 CI fix · 2 review fixes',
      '  - comment by carol on src/a.ts:3: not acted on (no write access)',
      '  - comment by ci-bot on README.md:1 &lt;img src=x onerror=alert(1)>: not acted on (a bot)',
      '- [#13](https://forge.example/alice/demo/pulls/13) (milestone 2): `saga/demo/deliver-m2` → `saga/demo/deliver-m1` · draft · CI pending',
    ]);
    const status = statusOf({ pullRequests: pullRequestPair() });
    for (const md of [renderProgressMd(status, extra), report(status)]) {
      expect(md).toContain(`## Pull requests\n\n${bullets}\n`);
      expect(md).not.toContain('<img');
    }
  });

  test('a URL that is not http(s) is shown as code, never as a link', () => {
    const [pr] = pullRequestPair();
    const md = pullRequestBullets([{ ...pr!, url: 'javascript:alert(1)', listedComments: [] }]);
    expect(md).toMatch(/^- #12 `javascript:alert\(1\)` \(milestone 1\)/);
  });

  test('without pull requests (delivery: local) both files are exactly as before', () => {
    const status = statusOf();
    expect(renderProgressMd({ ...status, pullRequests: [] }, extra)).toBe(renderProgressMd(status, extra));
    expect(renderProgressMd(status, extra)).not.toContain('Pull requests');
    expect(report(status)).not.toContain('Pull requests');
    expect(renderStatus(status)).not.toContain('Pull requests');
  });
});
