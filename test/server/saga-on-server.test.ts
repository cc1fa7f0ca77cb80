/**
 * The saga on the production Temporal server (temporal-server on PostgreSQL with SQL visibility, built and
 * started by scripts/server-stack.sh), driven as a user drives it: bin/saga commands, `saga worker`
 * processes of two hosts, the demo agent. A worker killed mid-agent and the server process killed
 * mid-saga are both survived; list, status and search-attribute queries answer right after a start and
 * right after the restart; the UI server shows the saga's children in Chromium.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../src/demo/sample-repo';
import { phaseWorkflowId, sagaWorkflowId, taskWorkflowId } from '../../src/domain/contract/naming';
import type { SagaStatus } from '../../src/domain/contract/state';
import { findTemporalBinary } from '../../src/worker/temporal-binary';
import { runSaga } from '../harness/cli';
import { writeOneTaskPlan } from '../harness/one-task-plan';
import { createSagaTestEnv, demoInvocations, waitForPending, waitForStatus } from '../harness/saga-env';
import type { SagaTestEnv } from '../harness/saga-env';
import { sagaHistories } from '../harness/fleet-saga';
import { ARTIFACTS_ROOT } from '../harness/server';
import { ensureBuilt, killStrayWorkers, spawnWorker, type WorkerProcess } from '../harness/worker-process';
import { serverPid, stackInfo, startArgs, startStack } from './stack';

jest.setTimeout(600_000);

const GREET = `'use strict';\nmodule.exports = { greet: (name = 'world') => \`Hello, \${name}!\` };\n`;
const GREET_TEST = `const test = require('node:test');\nconst assert = require('node:assert');\nconst { greet } = require('../src/greet');\ntest('greets', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));\n`;
/** A one-task saga whose agent works for `sleepMs` (long enough to be interrupted). */
const slowTaskScript = (sleepMs: number) => ({
  tasks: {
    '1.1': {
      attempts: [{ files: { 'src/greet.js': GREET, 'test/greet.test.js': GREET_TEST }, sleep_ms: sleepMs }],
    },
  },
});

interface Host {
  hostId: string;
  home: string;
  demoLog: string;
  worker?: WorkerProcess;
}

describe('saga on the production Temporal server (PostgreSQL)', () => {
  const stack = stackInfo();
  let env: SagaTestEnv;
  let cliEnv: NodeJS.ProcessEnv;
  const hosts: Host[] = [];
  const ran: string[] = [];

  const hostEnv = (h: Host): NodeJS.ProcessEnv => ({ ...cliEnv, SAGA_HOME: h.home, SAGA_HOST_ID: h.hostId });
  const saga = async (h: Host, args: string[]) => {
    const result = await runSaga(args, hostEnv(h), 120_000);
    return result;
  };
  const ok = async (h: Host, args: string[]) => {
    const result = await saga(h, args);
    expect([args.join(' '), result.code, result.stderr]).toEqual([args.join(' '), 0, '']);
    return result.stdout;
  };
  const status = async (h: Host, name: string): Promise<SagaStatus> =>
    JSON.parse(await ok(h, ['status', name, '--json'])) as SagaStatus;
  const listed = async (h: Host) =>
    JSON.parse(await ok(h, ['list', '--json'])) as {
      name: string;
      phase: string | null;
      awaitingInput: boolean;
    }[];

  /** Temporal's own CLI against the stack: a visibility query. */
  const workflowIdsMatching = (query: string): Promise<string[]> =>
    new Promise((resolve, reject) => {
      execFile(
        findTemporalBinary(),
        ['workflow', 'list', '--address', stack.env.TEMPORAL_ADDRESS!, '--query', query, '--output', 'json'],
        { encoding: 'utf8' },
        (error, stdout, stderr) => {
          if (error) return reject(new Error(`${error.message}\n${stderr}`));
          // The JSON rows name each execution's workflowId (nested under `execution`).
          resolve([...stdout.matchAll(/"workflowId":\s*"([^"]+)"/g)].map((m) => m[1]!));
        },
      );
    });
  /** Visibility is eventually consistent: polls until `check` holds; returns how long that took. */
  const eventually = async (
    what: string,
    check: () => Promise<boolean>,
    timeoutMs = 15_000,
  ): Promise<number> => {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > timeoutMs) throw new Error(`${what}: not seen within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return Date.now() - started;
  };
  const awaitingInput = (name: string) =>
    eventually(`SagaAwaitingInput=true lists ${name}`, async () =>
      (await workflowIdsMatching(`SagaAwaitingInput=true AND SagaName="${name}"`)).includes(
        sagaWorkflowId(name),
      ),
    );

  const newHost = async (label: string): Promise<Host> => {
    const dir = env.tmp(`host-${label}`);
    const host: Host = {
      hostId: `${env.hostId}-${label}`,
      home: path.join(dir, 'home'),
      demoLog: path.join(dir, 'demo.log'),
    };
    host.worker = await spawnWorker(env, host.hostId, { SAGA_HOME: host.home, SAGA_DEMO_LOG: host.demoLog });
    hosts.push(host);
    return host;
  };

  beforeAll(async () => {
    env = await createSagaTestEnv('srv');
    cliEnv = { ...env.cliEnv, SAGA_UI_URL: stack.env.SAGA_UI_URL };
    await ensureBuilt();
    await newHost('a');
    await newHost('b');
  }, 180_000);

  afterAll(async () => {
    await killStrayWorkers();
    await env.close();
  });

  test('two hosts run the demo saga end to end (two milestones, parallel lanes, a fix→validate retry)', async () => {
    const [a, b] = hosts as [Host, Host];
    const sagas = [
      {
        host: a,
        name: 'srv-e2e-a',
        repo: createSampleRepo(path.join(env.tmp('repo-a'), 'greeting'), { failFirstAttempt: true }),
      },
      { host: b, name: 'srv-e2e-b', repo: createSampleRepo(path.join(env.tmp('repo-b'), 'greeting')) },
    ];
    for (const s of sagas) {
      const out = await ok(s.host, [
        'start',
        '--repo',
        s.repo,
        '--plan',
        GREETING_PLAN_FILE,
        '--name',
        s.name,
        '--',
        '--parallel=2 Add greeting',
      ]);
      expect(out).toContain(`Started saga '${s.name}'`);
      // Right after the start: status reads the workflow itself, never "no such saga".
      const first = await status(s.host, s.name);
      expect(first.name).toBe(s.name);
      expect(first.uiUrl).toContain(stack.env.SAGA_UI_URL);
      const lag = await eventually(`saga list shows ${s.name}`, async () =>
        (await listed(s.host)).some((e) => e.name === s.name),
      );
      console.log(`visibility: ${s.name} listed ${lag} ms after \`saga start\` returned`);
    }
    for (const s of sagas) {
      await waitForPending(env, s.name, 'confirm-name', 120_000);
      await awaitingInput(s.name);
      await ok(s.host, ['respond', s.name, 'confirm-name', '1']);
      await waitForPending(env, s.name, 'plan-approval-1', 120_000);
      await ok(s.host, ['approve', s.name]);
    }
    for (const s of sagas) {
      const review = await waitForPending(env, s.name, 'acceptance-1', 300_000);
      expect(review.milestones).toHaveLength(2);
      expect(review.milestones.flatMap((m) => m.tasks).every((t) => t.status === 'integrated')).toBe(true);
      await ok(s.host, ['accept', s.name]);
      await waitForStatus(env, s.name, (st) => st.phase === 'complete', 120_000);
      expect((await status(s.host, s.name)).phase).toBe('complete');
    }
    // Task 1.1 of saga A failed its first validation and passed on its second attempt.
    const attemptsOf11 = demoInvocations(a.demoLog)
      .filter((r) => r.role === 'implementer' && r.taskId === '1.1')
      .map((r) => r.attempt);
    expect(attemptsOf11).toEqual(expect.arrayContaining([1, 2]));

    // Each saga's host work ran on its own host's worker process; its workflow code on either.
    for (const s of sagas) {
      const histories = await sagaHistories(env.client, sagaWorkflowId(s.name));
      expect(histories.has(taskWorkflowId(s.name, 2, 1))).toBe(true);
      const events = [...histories.values()].flat();
      const identities = events.flatMap((e) => e.activityTaskStartedEventAttributes?.identity ?? []);
      expect(identities.length).toBeGreaterThan(10);
      for (const id of identities) expect(id.startsWith(s.host.worker!.identityPrefix)).toBe(true);
    }
    const workflowTaskWorkers = new Set(
      (await Promise.all(sagas.map((s) => sagaHistories(env.client, sagaWorkflowId(s.name)))))
        .flatMap((m) => [...m.values()].flat())
        .flatMap((e) => e.workflowTaskCompletedEventAttributes?.identity ?? [])
        .map((id) => id.split('@')[0]),
    );
    console.log(
      `workflow tasks of both sagas were completed by worker pids ${[...workflowTaskWorkers].join(', ')}`,
    );
    ran.push(...sagas.map((s) => s.name));
  });

  test('a worker killed mid-agent: `saga continue` reports it, and the saga finishes when the worker returns', async () => {
    const a = hosts[0]!;
    const name = 'srv-kill';
    const dir = env.tmp('repo-kill');
    const repo = createSampleRepo(path.join(dir, 'greeting'), {
      script: slowTaskScript(8_000),
      configExtra: 'heartbeat_timeout: 5s\n',
    });
    await ok(a, startArgs(repo, writeOneTaskPlan(dir, name), name));
    await waitForPending(env, name, 'confirm-name', 120_000);
    await ok(a, ['respond', name, 'confirm-name', '1']);
    await waitForPending(env, name, 'plan-approval-1', 120_000);
    await ok(a, ['approve', name]);
    const agentRuns = () =>
      demoInvocations(a.demoLog).filter((r) => r.role === 'implementer' && r.taskId === '1.1' && r.pid);
    const before = agentRuns().length;
    await eventually('the agent of task 1.1 started', async () => agentRuns().length > before, 120_000);

    const killed = await a.worker!.stop('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    // The saga is still there and says where it is; continue reconciles git and leaves it running.
    const continued = await ok(a, ['continue', name, '--detach']);
    expect(continued).toContain(name);
    expect((await status(a, name)).phase).toBe('implementation');

    a.worker = await spawnWorker(env, a.hostId, { SAGA_HOME: a.home, SAGA_DEMO_LOG: a.demoLog });
    await waitForPending(env, name, 'acceptance-1', 300_000);
    // The interrupted agent ran again on the returned worker.
    expect(agentRuns().length).toBeGreaterThanOrEqual(before + 2);
    await ok(a, ['accept', name]);
    await waitForStatus(env, name, (s) => s.phase === 'complete', 120_000);
  });

  test('the Temporal server process killed mid-saga: workers reconnect, the saga finishes, list/status/queries answer', async () => {
    const b = hosts[1]!;
    const name = 'srv-restart';
    const dir = env.tmp('repo-restart');
    const repo = createSampleRepo(path.join(dir, 'greeting'), { script: slowTaskScript(6_000) });
    await ok(b, startArgs(repo, writeOneTaskPlan(dir, name), name));
    await waitForPending(env, name, 'confirm-name', 120_000);
    await ok(b, ['respond', name, 'confirm-name', '1']);
    await waitForPending(env, name, 'plan-approval-1', 120_000);
    await ok(b, ['approve', name]);
    const agentRuns = () =>
      demoInvocations(b.demoLog).filter((r) => r.role === 'implementer' && r.taskId === '1.1');
    await eventually('the agent of task 1.1 started', async () => agentRuns().length > 0, 120_000);

    const pid = serverPid(stack.dir);
    process.kill(pid, 'SIGKILL');
    const down = Date.now();
    await startStack(stack.dir); // PostgreSQL and the UI server are still up: only the server starts
    expect(serverPid(stack.dir)).not.toBe(pid);
    console.log(`temporal-server killed and back (health SERVING) in ${Date.now() - down} ms`);

    // Right after the restart: status, list and the search-attribute query answer.
    expect((await status(b, name)).name).toBe(name);
    expect((await listed(b)).map((e) => e.name)).toEqual(expect.arrayContaining([name, ...ran]));
    await waitForPending(env, name, 'acceptance-1', 300_000);
    await awaitingInput(name);
    const entry = (await listed(b)).find((e) => e.name === name);
    expect(entry).toMatchObject({ awaitingInput: true });
    await ok(b, ['accept', name]);
    await waitForStatus(env, name, (s) => s.phase === 'complete', 120_000);
    await eventually(
      'SagaAwaitingInput=false after acceptance',
      async () =>
        !(await workflowIdsMatching(`SagaAwaitingInput=true AND SagaName="${name}"`)).includes(
          sagaWorkflowId(name),
        ),
    );
    // Both workers kept serving through the restart.
    for (const h of hosts) expect(existsSync(`/proc/${h.worker!.pid}`)).toBe(true);
  });

  test('the UI server shows the saga and its child workflows (Chromium)', async () => {
    const chromiumPath = process.env.SAGA_CHROMIUM || '/usr/bin/chromium';
    if (!existsSync(chromiumPath))
      throw new Error(`Chromium is not installed at ${chromiumPath}: run scripts/install-chromium.sh.`);
    const name = ran[0]!;
    const browser = await chromium.launchPersistentContext(
      mkdtempSync(path.join(env.tmp('chromium'), 'p-')),
      {
        executablePath: chromiumPath,
        headless: true,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          '--disable-background-networking',
        ],
        viewport: { width: 1400, height: 1000 },
      },
    );
    try {
      const page = browser.pages()[0] ?? (await browser.newPage());
      const query = encodeURIComponent(`SagaName="${name}"`);
      await page.goto(`${stack.env.SAGA_UI_URL}/namespaces/default/workflows?query=${query}`, {
        timeout: 60_000,
      });
      for (const id of [
        sagaWorkflowId(name),
        phaseWorkflowId(name, 'planning'),
        phaseWorkflowId(name, 'implementation', 1),
        taskWorkflowId(name, 1, 1),
        taskWorkflowId(name, 2, 1),
      ])
        await page.getByRole('link', { name: id, exact: true }).first().waitFor({ timeout: 60_000 });
      // Another saga on the same server is filtered out.
      expect(await page.getByText(sagaWorkflowId(ran[1]!), { exact: true }).count()).toBe(0);
      const shots = path.join(ARTIFACTS_ROOT, 'screenshots');
      mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: path.join(shots, 'server-stack-ui.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
