/**
 * The worker fleet against a real server, real git and the demo agent: a 2-milestone, 5-task saga with
 * dependencies under `--subagents --parallel=2`. Lanes, dependencies and owned paths are checked on the
 * task workflows' real start and close times; integration, milestone checks, worktree cleanup, the live
 * view of running agents and `saga cleanup` on what a crashed run would leave.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from '../../../../src/client/args';
import { cleanupCommand } from '../../../../src/client/commands/cleanup';
import { COMMAND_DECLS } from '../../../../src/client/declarations';
import { renderStatus } from '../../../../src/client/commands/inspect';
import { runningAgents, type RunningAgent } from '../../../../src/client/running-agents';
import { respond } from '../../../../src/client/saga-client';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { ownsOverlap } from '../../../../src/domain/fleet/schedule';
import {
  createFleetRepo,
  git,
  planTask,
  sagaWorktrees,
  startApprovedSaga,
} from '../../../harness/fleet-saga';
import {
  createSagaTestEnv,
  sagaStatus,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

const mod = (value: string, requires = '') => `${requires}module.exports = () => ${value};\n`;
const loads = (...mods: string[]) => `node -e "${mods.map((m) => `require('./src/${m}.js')`).join(';')}"`;
const returns = (m: string, value: string) =>
  `node -e "require('assert').strictEqual(require('./src/${m}.js')(), '${value}')"`;

const PLAN = {
  name: 'fleet',
  problem: 'A sample with five modules built by a fleet of agents.',
  scope: { in: ['src/*.js'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'every module loads', check: loads('alpha', 'beta', 'gamma', 'delta') }],
  milestones: [
    {
      id: 1,
      slug: 'core',
      title: 'Core modules',
      depends_on: [],
      goal: 'alpha, beta and gamma.',
      validation: [{ text: 'core modules load', check: loads('alpha', 'beta', 'gamma') }],
      tasks: [
        planTask(1, 'alpha', ['src/alpha.js'], returns('alpha', 'alpha')),
        planTask(2, 'beta', ['src/beta.js'], returns('beta', 'beta')),
        // gamma builds on alpha: it needs 1.1's branch merged in.
        planTask(3, 'gamma', ['src/gamma.js'], returns('gamma', 'alpha+gamma'), ['1.1']),
      ],
    },
    {
      id: 2,
      slug: 'extras',
      title: 'Extras',
      depends_on: [1],
      goal: 'delta, and alpha revised.',
      validation: [{ text: 'everything loads', check: loads('alpha', 'delta', 'gamma') }],
      tasks: [
        planTask(1, 'delta', ['src/delta.js'], returns('delta', 'beta+delta'), ['1.2']),
        // Owns the same file as 1.1 (allowed across milestones): the two must never run at once.
        planTask(2, 'alpha-v2', ['src/alpha.js'], returns('alpha', 'alpha'), ['1.1']),
      ],
    },
  ],
};

const step = (files: Record<string, string>, sleepMs: number, costUsd: number) => ({
  attempts: [
    { files, sleep_ms: sleepMs, usage: { input_tokens: 100, output_tokens: 10, cost_usd: costUsd } },
  ],
});

const SCRIPT = {
  tasks: {
    '1.1': step({ 'src/alpha.js': mod("'alpha'") }, 1500, 0.01),
    // Long enough for the live view to catch its heartbeat (throttled to 0.8 x heartbeat_timeout).
    '1.2': step({ 'src/beta.js': mod("'beta'") }, 4000, 0.02),
    '1.3': step({ 'src/gamma.js': mod("a() + '+gamma'", "const a = require('./alpha');\n") }, 1000, 0.01),
    '2.1': step({ 'src/delta.js': mod("b() + '+delta'", "const b = require('./beta');\n") }, 1000, 0.01),
    '2.2': step({ 'src/alpha.js': `// v2\n${mod("'alpha'")}` }, 1000, 0.01),
  },
};

interface Span {
  ref: string;
  start: number;
  end: number;
}

describe('worker fleet', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('fleet');
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  test('2 milestones, 5 tasks, 2 lanes: lanes, dependencies, owns, integration, cleanup', async () => {
    const dir = env.tmp('fleet');
    const { repo, planFile } = createFleetRepo(dir, {
      plan: PLAN,
      script: SCRIPT,
      config: 'heartbeat_timeout: 3s\n',
    });
    const demoLog = path.join(dir, 'demo.log');
    process.env.SAGA_DEMO_LOG = demoLog;
    const input = await startApprovedSaga(env, {
      repo,
      planFile,
      name: 'fleet',
      args: '--subagents --parallel=2 Build the fleet sample',
    });
    const name = input.name;

    // While 1.2 runs, the live view shows it with its attempt, elapsed time and last output line.
    let seen: RunningAgent | undefined;
    const deadline = Date.now() + 60_000;
    while (!seen && Date.now() < deadline) {
      const status = await sagaStatus(env, name);
      const agents = await runningAgents(env.client, status);
      seen = agents.find((a) => a.taskId === '1.2' && /working/.test(a.lastLine));
      if (seen)
        expect(renderStatus(status, agents)).toMatch(
          /Running agents:\n(.*\n)* {2}1\.2 beta \(attempt 1, delegation 1, \d+s\): Attempt 1: agent running — \[demo-agent\] working/,
        );
      else await new Promise((r) => setTimeout(r, 250));
    }
    expect(seen).toMatchObject({ step: 'Attempt 1: agent running', activity: 'runTaskAttempt' });
    expect(seen!.elapsedMs).toBeGreaterThan(0);

    // A running saga owns its worktrees: cleanup refuses.
    const io = {
      lines: [] as string[],
      out: (l: string) => io.lines.push(l),
      err: (l: string) => io.lines.push(l),
    };
    await expect(
      cleanupCommand(parseArgs(COMMAND_DECLS, 'cleanup', [name]), io, async () => env.client),
    ).rejects.toThrow(/still running/);

    const done = await waitForPending(env, name, 'acceptance-1', 120_000);
    const tasks = done.milestones.flatMap((m) => m.tasks);
    expect(tasks.map((t) => [t.id, t.status, t.delegations])).toEqual([
      ['1.1', 'integrated', 1],
      ['1.2', 'integrated', 1],
      ['1.3', 'integrated', 1],
      ['2.1', 'integrated', 1],
      ['2.2', 'integrated', 1],
    ]);
    expect(done.milestones.map((m) => m.status)).toEqual(['integrated', 'integrated']);

    // Lanes, dependencies and owned paths, from the task workflows' own start and close times.
    const spans: Span[] = [];
    for (const t of tasks) {
      const d = await env.client.workflow.getHandle(t.workflowId!).describe();
      spans.push({ ref: t.id, start: d.startTime.getTime(), end: d.closeTime!.getTime() });
    }
    const at = (ref: string) => spans.find((s) => s.ref === ref)!;
    const overlapping = (a: Span, b: Span) => a.start < b.end && b.start < a.end;
    const maxConcurrent = Math.max(
      ...spans.map((s) => spans.filter((o) => o.start <= s.start && s.start < o.end).length),
    );
    expect(maxConcurrent).toBe(2); // two lanes used, never three
    expect(overlapping(at('1.1'), at('1.2'))).toBe(true);
    for (const [task, dep] of [
      ['1.3', '1.1'],
      ['2.1', '1.2'],
      ['2.2', '1.1'],
    ] as const)
      expect(at(task).start).toBeGreaterThanOrEqual(at(dep).end);
    const planTasks = PLAN.milestones.flatMap((m) =>
      m.tasks.map((t) => ({ ref: `${m.id}.${t.id}`, owns: t.owns as string[] })),
    );
    for (const a of planTasks)
      for (const b of planTasks)
        if (a.ref < b.ref && ownsOverlap(a.owns, b.owns))
          expect(overlapping(at(a.ref), at(b.ref))).toBe(false);
    // Milestone 2 starts only once milestone 1 is integrated.
    const m1End = Math.max(...['1.1', '1.2', '1.3'].map((r) => at(r).end));
    expect(Math.min(at('2.1').start, at('2.2').start)).toBeGreaterThan(m1End);

    // One agent run per task, as the demo agent logged them.
    const runs = readFileSync(demoLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { role: string; taskId: string; attempt: number });
    expect(
      runs
        .filter((r) => r.role === 'implementer')
        .map((r) => r.taskId)
        .sort(),
    ).toEqual(['1.1', '1.2', '1.3', '2.1', '2.2']);

    // The integration branch holds every task commit, and the milestone checks passed on it.
    const integration = 'saga/fleet/integration';
    for (const t of tasks) {
      expect(t.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(() => git(repo, 'merge-base', '--is-ancestor', t.commit!, integration)).not.toThrow();
    }
    expect(git(repo, 'show', `${integration}:src/gamma.js`)).toContain("require('./alpha')");
    expect(git(repo, 'show', `${integration}:src/alpha.js`)).toContain('// v2');
    expect(done.log.join('\n')).toMatch(
      /Milestone 1 integrated at [0-9a-f]{10}; merge order 1\.1, 1\.2, 1\.3; validation passed/,
    );
    expect(done.log.join('\n')).toMatch(/Milestone 2 integrated .*validation passed/);
    expect(existsSync(path.join(input.sagaDir, 'runs'))).toBe(true);

    // Usage per milestone and for the saga.
    expect(done.usage!.costUsd).toBeCloseTo(0.06, 5);
    const rendered = renderStatus(done);
    expect(rendered).toMatch(
      /Milestone 1 Core modules: integrated, 3\/3 tasks done \(\$0\.04, 300 in \/ 30 out tokens\)/,
    );
    expect(rendered).toMatch(/Milestone 2 Extras: integrated, 2\/2 tasks done \(\$0\.02/);
    expect(rendered).toMatch(/Usage: \$0\.06/);

    // No saga worktree is left behind.
    expect(sagaWorktrees(repo, name)).toEqual([]);
    await respond(env.client, name, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
    expect((await env.client.workflow.getHandle(sagaWorkflowId(name)).result()).phase).toBe('complete');
    await waitForStatus(env, name, (s) => s.phase === 'complete');

    // What a crashed run would leave: one clean worktree and one with uncommitted work.
    const clean = path.join(dir, 'leftover-clean');
    const dirty = path.join(dir, 'leftover-dirty');
    git(repo, 'worktree', 'add', '-q', clean, tasks[0]!.branch);
    git(repo, 'worktree', 'add', '-q', dirty, tasks[1]!.branch);
    writeFileSync(path.join(dirty, 'unsaved.txt'), 'work in progress\n');
    io.lines.length = 0;
    expect(
      await cleanupCommand(parseArgs(COMMAND_DECLS, 'cleanup', [name]), io, async () => env.client),
    ).toBe(1);
    expect(io.lines.join('\n')).toMatch(/Removed worktree .*leftover-clean/);
    expect(io.lines.join('\n')).toMatch(/Kept .*leftover-dirty: uncommitted changes: unsaved\.txt/);
    expect(existsSync(clean)).toBe(false);
    expect(existsSync(path.join(dirty, 'unsaved.txt'))).toBe(true);
    expect(
      await cleanupCommand(
        parseArgs(COMMAND_DECLS, 'cleanup', [name, '--force']),
        io,
        async () => env.client,
      ),
    ).toBe(0);
    expect(sagaWorktrees(repo, name)).toEqual([]);
    // Branches stay.
    expect(git(repo, 'branch', '--list', 'saga/fleet/*').split('\n')).toHaveLength(6);
  }, 240_000);
});
