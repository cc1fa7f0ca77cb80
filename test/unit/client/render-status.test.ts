import * as fs from 'fs';
import * as path from 'path';
import { renderStatus } from '../../../src/client/commands/inspect';
import { initialMilestones } from '../../../src/domain/fleet/fleet';
import { parseFlags } from '../../../src/domain/request/flags';
import { parsePlanText } from '../../../src/domain/plan/parse-text';
import type { SagaStatus } from '../../../src/domain/contract/state';
import { PROJECT_ROOT } from '../../../src/project-root';

function greetingStatus(): SagaStatus {
  const parsed = parsePlanText(
    fs.readFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'plans', 'greeting.yaml'), 'utf8'),
    'greeting.yaml',
  );
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  return {
    name: 'add-greeting',
    workflowId: 'saga-add-greeting',
    phase: 'implementation',
    goal: 'Add a greeting',
    repo: '/repos/app',
    flags: parseFlags('Add a greeting', {}),
    executionMode: 'inline',
    pending: [],
    milestones: initialMilestones('add-greeting', parsed.plan),
    integrationBranch: 'saga/add-greeting/integration',
    sagaDir: '/home/u/.sagas/add-greeting',
    uiUrl: '',
    round: 1,
    log: [],
  };
}

describe('saga status (the terminal view)', () => {
  it("shows where a saga from an issue came from, the tracker's url without its escapes", () => {
    const status = greetingStatus();
    expect(renderStatus(status)).not.toContain('Source:');
    status.source = { ref: 'gitea:alice/demo#3', url: 'https://git.example.com/alice/demo/issues/3\x1b[2J' };
    const lines = renderStatus(status).split('\n');
    expect(lines[2]).toBe('Source: gitea:alice/demo#3 (https://git.example.com/alice/demo/issues/3)');
  });

  it("shows an integrated milestone's landed tasks as its count, and every task that did not land", () => {
    const status = greetingStatus();
    const [m1, m2] = status.milestones;
    m1!.status = 'integrated';
    Object.assign(m1!.tasks[0]!, { status: 'integrated', commit: 'aaaaaaaaaaaa', attempts: 1 });
    Object.assign(m1!.tasks[1]!, { status: 'skipped', attempts: 2, reason: 'superseded by 1.1' });
    m2!.status = 'running';
    Object.assign(m2!.tasks[0]!, { status: 'running', attempts: 1 });

    const lines = renderStatus(status).split('\n');
    const m1Line = lines.findIndex((l) => l.startsWith('  Milestone 1 '));
    const m2Line = lines.findIndex((l) => l.startsWith('  Milestone 2 '));
    expect(lines[m1Line]).toMatch(/: integrated, 2\/2 tasks done$/);
    // The landed task is in the count only; the skipped one keeps its line and reason.
    expect(lines.slice(m1Line + 1, m2Line)).toEqual([
      `    1.2 ${m1!.tasks[1]!.slug}: skipped (2 attempt(s), superseded by 1.1)`,
    ]);
    // A milestone that runs lists every task.
    expect(lines[m2Line + 1]).toBe(`    2.1 ${m2!.tasks[0]!.slug}: running (1 attempt(s))`);
  });
});
