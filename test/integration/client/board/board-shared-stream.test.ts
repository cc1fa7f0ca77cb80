/**
 * The faster board (issue 47) on a real saga (`bin/saga start`, real Temporal server and worker, the demo
 * agent) and the real board server, in real Chromium: two tabs of one browser share ONE event stream (the
 * board's watcher counts one subscription per topic, not one per tab) and both show a task's change; a lane
 * more than a screen below the fold has no cards until it is scrolled into view; the dependency graph's
 * module (and dagre) is not loaded until the graph is opened.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { startBoardServer, type BoardServer } from '../../../../src/client/board/server';
import { respond } from '../../../../src/client/saga-client';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import { launchChromium, type Browser } from '../../../harness/chromium';
import { runSaga } from '../../../harness/cli';
import { cancelSagaQuietly, greetingScript } from '../../../harness/greeting-saga';
import { createSagaTestEnv, sagaStatus, waitForStatus, type SagaTestEnv } from '../../../harness/saga-env';

jest.setTimeout(180_000);

const TOKEN = 'board-shared-token-0123456789abcdef';
const AGENT_MS = 2_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('board: one event stream per browser, lanes and graph built when needed (real server, Chromium)', () => {
  let env: SagaTestEnv;
  let board: BoardServer;
  let browser: Browser;
  let tabs: Page[] = [];
  const name = `boardshared-${Date.now().toString(36)}`;

  /** Answers what the saga asks (the recommended option, else the first) until its implementation runs. */
  async function answerUntilImplementation(): Promise<void> {
    for (let i = 0; i < 10; i++) {
      const s = await waitForStatus(env, name, (x) => x.pending.length > 0 || x.phase === 'implementation');
      if (s.phase === 'implementation') return;
      const ask = s.pending[0]!;
      const choice = ask.options[ask.recommended ?? 0] ?? ask.options[0]!;
      await respond(env.client, name, { interactionId: ask.id, choice, user: 'test' });
      await waitForStatus(env, name, (x) => !x.pending.some((p) => p.id === ask.id));
    }
  }

  /** The board's open subscriptions once they settle (a closed tab's lock is released asynchronously). */
  async function settledListeners(expected: number): Promise<number> {
    for (let i = 0; i < 100 && board.watcher.listeners() !== expected; i++) await sleep(50);
    return board.watcher.listeners();
  }

  beforeAll(async () => {
    env = await createSagaTestEnv('boardshared');
    await env.startWorkers();
    const slow = (files: Record<string, string>) => ({ attempts: [{ files, sleep_ms: AGENT_MS }] });
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      questionRounds: 0,
      script: greetingScript(slow),
    });
    const started = await runSaga(
      ['start', '--repo', repo, '--name', name, '--', 'Add a greeting'],
      env.cliEnv,
    );
    expect(started.code).toBe(0);
    board = await startBoardServer({
      client: env.client,
      token: TOKEN,
      user: 'tester',
      ui: { uiBaseUrl: null, namespace: env.client.options.namespace },
      port: 0,
      pollMs: 250,
    });
    browser = await launchChromium(env.tmp('chromium'));
  }, 120_000);

  afterAll(async () => {
    await browser?.context.close();
    await board?.close();
    await cancelSagaQuietly(env, name);
    await env?.close();
  });

  it('two tabs of one browser share one event stream, and both show a task change', async () => {
    expect(board.watcher.listeners()).toBe(0);
    const url = `${board.url}/?token=${TOKEN}#/saga/${name}`;
    tabs = [browser.page, await browser.context.newPage()];
    for (const tab of tabs) {
      await tab.goto(url);
      await tab.locator('.saga-head h1').waitFor();
    }
    // One stream: the list and the saga, once each. Two streams (one per tab) would be 4.
    expect(await settledListeners(2)).toBe(2);
    expect(board.watcher.listeners()).toBe(2);

    await answerUntilImplementation();
    for (const tab of tabs)
      await tab.locator('[data-task="1.1"][data-status="running"]').waitFor({ timeout: 60_000 });
    for (const tab of tabs)
      await tab
        .locator('[data-task="1.1"][data-status="passed"], [data-task="1.1"][data-status="integrated"]')
        .waitFor({
          timeout: 90_000,
        });
    expect(await settledListeners(2)).toBe(2);

    // A closed tab lets go of its topics (its Web Lock is released); the other tab's page alone decides.
    await tabs[1]!.close();
    await browser.page.evaluate(`location.hash = '#/'`);
    expect(await settledListeners(1)).toBe(1); // the list alone: nobody shows the saga now
    await browser.page.evaluate(`location.hash = '#/saga/${name}'`);
    expect(await settledListeners(2)).toBe(2);
    expect(browser.pageErrors).toEqual([]);
  });

  it('a lane more than a screen below the fold has no cards until it is scrolled into view', async () => {
    const tab = browser.page;
    await tab.setViewportSize({ width: 1400, height: 150 });
    await tab.reload();
    const lane = tab.locator('section.lane[data-milestone="2"]');
    await lane.waitFor({ state: 'attached' });
    await tab.locator('section.lane[data-milestone="1"]').waitFor({ state: 'attached' });
    await sleep(500); // the observers have had their say
    const top = await lane.evaluate((el) => el.getBoundingClientRect().top);
    expect(top).toBeGreaterThan(2 * 150);
    expect(await lane.getAttribute('data-tasks')).toBe('1');
    expect(await lane.locator('article.task').count()).toBe(0);
    expect(await lane.locator('> header').textContent()).toContain('/1');
    await lane.scrollIntoViewIfNeeded();
    await lane.locator('[data-task="2.1"]').waitFor();
    expect(await lane.locator('[data-task="2.1"]').getAttribute('data-status')).toMatch(/\w/);
    await tab.setViewportSize({ width: 1400, height: 1000 });
  });

  it('loads the graph module (and dagre) only when the graph is opened', async () => {
    const tab = browser.page;
    const scripts = async () =>
      ((await tab.evaluate(`performance.getEntriesByType('resource').map((e) => e.name)`)) as string[])
        .map((u) => new URL(u).pathname)
        .filter((p) => p.endsWith('.js') || p.endsWith('.mjs'));
    expect(await scripts()).toContain('/lanes.js');
    expect((await scripts()).filter((p) => /graph|dagre|marked|purify/.test(p))).toEqual([]);
    await tab.click('.graph-box summary');
    await tab.locator('svg.dag [data-node="1.1"]').waitFor();
    expect((await scripts()).filter((p) => /graph|dagre/.test(p)).sort()).toEqual([
      '/graph.js',
      '/vendor/@dagrejs/dagre/dist/dagre.esm.js',
    ]);
    expect((await sagaStatus(env, name)).phase).not.toBe('failed');
    expect(browser.pageErrors).toEqual([]);
  });
});
