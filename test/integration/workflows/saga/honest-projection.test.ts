/**
 * Honest projections (docs/PROCEDURE.md §11.2): the markdown tree follows the saga after planning (SAGA.md, MILESTONE.md
 * and task specs re-rendered from its status, the acceptance milestone gets its folder, PROGRESS.md keeps
 * the whole log newest first with decisions, deviations and integration notes); a failed saga tells chat
 * why; `saga status` shows the --config file. Real server, real git, the demo agent, a local HTTP receiver.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from '../../../../src/client/args';
import { statusCommand } from '../../../../src/client/commands/inspect';
import { COMMAND_DECLS } from '../../../../src/client/declarations';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { respond } from '../../../../src/client/saga-client';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { progressBatchSignal } from '../../../../src/domain/saga/messages';
import { startHttpRecorder, type HttpRecorder } from '../../../harness/http-recorder';
import { createFleetRepo, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import { saveEnv } from '../../../harness/process-env';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

jest.setTimeout(240_000);

const NOTIFY_SECRET = 'projection-notify-secret';
const MISSING_PLANNER = '/nonexistent/saga-projection-planner';

const read = (file: string): string => (existsSync(file) ? readFileSync(file, 'utf8') : '');
/** Polls until `file` satisfies `ok` (the projection is written by a background activity). */
async function waitForFile(file: string, ok: (text: string) => boolean, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = read(file);
    if (ok(text)) return text;
    if (Date.now() > deadline) throw new Error(`${file} never matched; it holds:\n${text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
/** The bullets of one `## title` section. */
const sectionOf = (md: string, title: string): string[] => {
  const start = md.indexOf(`## ${title}\n`);
  if (start < 0) return [];
  const rest = md.slice(start + title.length + 4);
  const end = rest.search(/^## /m);
  return (end < 0 ? rest : rest.slice(0, end))
    .split('\n')
    .filter((l) => l.startsWith('- '))
    .map((l) => l.slice(2));
};

describe('honest projections, failure notifications, config in status', () => {
  let env: SagaTestEnv;
  let receiver: HttpRecorder;
  let restoreEnv: () => void = () => undefined;

  beforeAll(async () => {
    env = await createSagaTestEnv('projection');
    receiver = await startHttpRecorder(() => ({ ok: true }));
    restoreEnv = saveEnv(['SAGA_NOTIFY_URL', 'SAGA_NOTIFY_SECRET']);
    // Read by the workers' notification activity.
    Object.assign(process.env, {
      SAGA_NOTIFY_URL: `${receiver.url}/notify`,
      SAGA_NOTIFY_SECRET: NOTIFY_SECRET,
    });
    await env.startWorkers();
  });
  afterAll(async () => {
    await env.close();
    await receiver.close();
    restoreEnv();
  });

  test('SAGA.md, MILESTONE.md, task specs and PROGRESS.md follow the saga through implementation and acceptance', async () => {
    const plan = {
      name: 'projection',
      problem: 'Two files written by two tasks.',
      scope: { in: ['a.txt', 'b.txt'], out: [], delegated: [] },
      exit_criteria: [{ id: 'E1', text: 'a.txt exists', check: 'test -f a.txt' }],
      milestones: [
        {
          id: 1,
          slug: 'core',
          title: 'Core files',
          depends_on: [],
          goal: 'a.txt and b.txt.',
          validation: [{ text: 'both exist', check: 'test -f a.txt && test -f b.txt' }],
          tasks: [
            planTask(1, 'write-a', ['a.txt'], 'test -f a.txt'),
            planTask(2, 'write-b', ['b.txt'], 'test -f b.txt'),
          ],
        },
      ],
    };
    const script = {
      tasks: {
        '1.1': { attempts: [{ files: { 'a.txt': 'a' } }] },
        '1.2': { attempts: [{ files: { 'b.txt': 'b' } }] },
        '2.1': { attempts: [{ files: { 'a.txt': 'bonjour' } }] },
      },
    };
    const dir = env.tmp('projection');
    const { repo, planFile } = createFleetRepo(dir, { plan, script });
    // --config: the same settings as the repo's, from a file of its own.
    const configFile = path.join(dir, 'projection-config.yaml');
    writeFileSync(configFile, 'default_agent: demo\nattempts: 3\n');
    const name = 'projection';
    const input = await startApprovedSaga(env, {
      repo,
      planFile,
      name,
      args: 'Write files',
      config: configFile,
    });
    const sagaDir = input.sagaDir;

    const waiting = await waitForPending(env, name, 'acceptance-1', 120_000);

    // `saga status` shows the config file (text and --json).
    expect(waiting.configFile).toBe(configFile);
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => out.push(l) };
    await statusCommand(parseArgs(COMMAND_DECLS, 'status', [name]), io, async () => env.client);
    expect(out.join('\n')).toContain(`Config: ${configFile}`);
    out.length = 0;
    await statusCommand(parseArgs(COMMAND_DECLS, 'status', [name, '--json']), io, async () => env.client);
    expect((JSON.parse(out.join('\n')) as SagaStatus).configFile).toBe(configFile);

    // After implementation: SAGA.md has the real phase and milestone statuses; specs their task's state.
    const sagaMd = await waitForFile(path.join(sagaDir, 'SAGA.md'), (t) =>
      t.includes('- **Phase:** acceptance'),
    );
    expect(sagaMd).toMatch(/\| 1 \| Core files \| — \| 1\.1, 1\.2 \| integrated \|/);
    expect(sagaMd).toContain(`- **Config file:** \`${configFile}\``);
    const milestoneMd = read(path.join(sagaDir, 'milestones/01-core/MILESTONE.md'));
    expect(milestoneMd).toContain('- **Status:** integrated');
    const commit = waiting.milestones[0]!.integrationCommit!;
    expect(milestoneMd).toContain(`- **Integration commit:** \`${commit.slice(0, 12)}\``);
    const taskMd = read(path.join(sagaDir, 'milestones/01-core/tasks/01-write-a.md'));
    const task = waiting.milestones[0]!.tasks[0]!;
    expect(taskMd).toContain('- **Status:** integrated');
    expect(taskMd).toContain(`- **Commit:** \`${task.commit!.slice(0, 12)}\``);
    expect(task.evidence.length).toBeGreaterThan(0);
    expect(sectionOf(taskMd, 'Evidence collected')).toEqual(task.evidence);

    // More log lines than the workflow keeps, a deviation and an integration note (as phases send them).
    const handle = env.client.workflow.getHandle(sagaWorkflowId(name));
    const fillers = Array.from({ length: 120 }, (_, i) => `Filler line ${i + 1}`);
    await handle.signal(progressBatchSignal, [
      { type: 'log', line: 'Deviation: spec gap on 1.1 answered: greet in French' },
      { type: 'log', line: 'Integration: M1 needed a manual rebase note' },
    ]);
    await waitForFile(path.join(sagaDir, 'PROGRESS.md'), (t) => t.includes('Integration: M1'));
    // Sent in small batches, as phases do: each stays within the window the workflow keeps between writes.
    for (let i = 0; i < fillers.length; i += 30) {
      await handle.signal(
        progressBatchSignal,
        fillers.slice(i, i + 30).map((line) => ({ type: 'log' as const, line })),
      );
      await waitForFile(path.join(sagaDir, 'PROGRESS.md'), (t) =>
        t.includes(`${fillers[Math.min(i + 29, fillers.length - 1)]}\n`),
      );
    }
    const progress = read(path.join(sagaDir, 'PROGRESS.md'));
    const log = sectionOf(progress, 'Log (newest first)');
    expect(log.length).toBeGreaterThan(120);
    expect(log[0]).toMatch(/ Filler line 120$/);
    expect(log[119]).toMatch(/ Filler line 1$/);
    // The whole log: the saga's first lines are still there, at the end.
    expect(log.slice(-3).some((l) => / Phase: planning$/.test(l))).toBe(true);
    expect(log.some((l) => l.includes('Task 1.1 write-a: passed'))).toBe(true);

    const decisions = sectionOf(progress, 'Decisions & Deviations');
    expect(decisions[0]).toMatch(/ Deviation: spec gap on 1\.1 answered: greet in French$/);
    // Answers recorded in decisions.md (the interaction effects write one entry per answer).
    expect(decisions.some((d) => /test answered plan-approval-1: approve \(decisions\.md\)$/.test(d))).toBe(
      true,
    );
    const integration = sectionOf(progress, 'Integration notes');
    expect(integration[0]).toBe(
      `Milestone 1 (Core files): integrated · integration commit ${commit.slice(0, 12)} · no re-delegations · no conflicts resolved`,
    );
    expect(integration.some((l) => l.endsWith(' Integration: M1 needed a manual rebase note'))).toBe(true);

    // Issues reported at acceptance: the new milestone gets its folder and task specs like the others.
    // The issue names its check (the acceptance phase asks for one when it does not).
    await respond(env.client, name, {
      interactionId: 'acceptance-1',
      choice: 'report issues',
      text: 'The greeting must be in French :: check: grep -q bonjour a.txt',
      user: 'test',
    });
    const askedForCheck = (s: SagaStatus) => s.pending.some((p) => p.id === 'acceptance-1-issue-1-check');
    const roundTwo = (s: SagaStatus) =>
      s.milestones.length === 2 && s.pending.some((p) => !p.id.startsWith('acceptance-1'));
    let next = await waitForStatus(env, name, (s) => roundTwo(s) || askedForCheck(s), 120_000);
    if (!roundTwo(next)) {
      await respond(env.client, name, {
        interactionId: 'acceptance-1-issue-1-check',
        choice: 'check',
        text: 'grep -q bonjour a.txt',
        user: 'test',
      });
      next = await waitForStatus(env, name, roundTwo, 120_000);
    }
    const fixes = next.milestones[1]!;
    const fixesDir = path.join(sagaDir, 'milestones', `02-${fixes.slug}`);
    await waitForFile(path.join(fixesDir, 'MILESTONE.md'), (t) => t.includes('# Milestone 2:'));
    const fixTask = fixes.tasks[0]!;
    const fixSpec = await waitForFile(path.join(fixesDir, 'tasks', `01-${fixTask.slug}.md`), (t) =>
      t.includes(`- **Status:** ${fixTask.status}`),
    );
    expect(fixSpec).toContain('# Task 2.1:');
    const sagaMd2 = await waitForFile(path.join(sagaDir, 'SAGA.md'), (t) =>
      t.includes(`| 2 | ${fixes.title} |`),
    );
    expect(sagaMd2).toContain(`[milestones/02-${fixes.slug}/MILESTONE.md]`);
    // The round went through: the projection shows round 2 at acceptance and the fix integrated.
    expect(next.pending.map((p) => p.id)).toEqual(['acceptance-2']);
    expect(fixTask.status).toBe('integrated');
    await waitForFile(path.join(sagaDir, 'SAGA.md'), (t) => t.includes('- **Phase:** acceptance (round 2)'));
    expect(read(path.join(fixesDir, 'MILESTONE.md'))).toContain('- **Status:** integrated');
    await handle.cancel();
    await waitForStatus(env, name, (s) => s.phase === 'cancelled');
    await waitForFile(path.join(sagaDir, 'SAGA.md'), (t) => t.includes('- **Phase:** cancelled'));
  });

  test('a failed saga tells chat why, in one line', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      configExtra: `agents:\n  broken:\n    command: ["${MISSING_PLANNER}"]\n`,
    });
    const name = 'projection-fails';
    const input = await prepareSaga({
      repo,
      trustRepoConfig: true,
      argumentsText: 'Greet',
      name,
      agent: 'broken',
      skipAgentCheck: true,
    });
    await startSaga(env.client, input);
    await waitForPending(env, name, 'confirm-name');
    await respond(env.client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
    await expect(env.client.workflow.getHandle(sagaWorkflowId(name)).result()).rejects.toThrow();
    const status = await waitForStatus(env, name, (s) => s.phase === 'failed');
    expect(status.error).toContain(MISSING_PLANNER);

    const request = await receiver.waitFor(
      (r) => r.rawBody.includes('"saga-failed"') && r.rawBody.includes(name),
    );
    const body = JSON.parse(request.rawBody) as {
      saga: string;
      interaction: { id: string; kind: string; prompt: string; options: string[] };
    };
    expect(body.saga).toBe(name);
    expect(body.interaction).toMatchObject({
      id: 'saga-failed',
      kind: 'failure',
      prompt: `Saga ${name} failed: ${status.error}`,
      options: [],
    });
    expect(request.headers['x-saga-signature']).toMatch(/^v1=[0-9a-f]+$/);
  });
});
