/**
 * The saga board's page in real Chromium (Debian's `chromium`, driven by playwright-core)
 * against a stub of the board server (test/harness/board-stub.ts; the real server's end-to-end test is
 * separate): the sagas list with its waiting badge, the confirm-name card with the recommended option,
 * an answer POSTed with the Bearer token, a refusal's text on the card, agent text shown as text, a task
 * card that changes state on a server-sent event, the dependency graph from `dependsOn`, the running
 * agent's live line, the agent runs packed into rows, exit criteria results, and 1,000 tasks.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { launchChromium } from '../../../harness/chromium';
import {
  BoardStub,
  interaction,
  statusFixture,
  task,
  type AgentView,
  type BoardTask,
} from '../../../harness/board-stub';
import { ARTIFACTS_ROOT } from '../../../harness/server';

const SCREENSHOTS = path.join(ARTIFACTS_ROOT, 'screenshots');
const XSS = '<script>alert(1)</script>';
const REFUSAL = "Interaction 'question-1' has no option 'nope'; the options are: yes, no.";
const ago = (seconds: number): string => new Date(Date.now() - seconds * 1000).toISOString();
/** A fixed morning the finished runs happened in, `minutes` after its start. */
const T0 = Date.parse('2026-01-02T10:00:00Z');
const at = (minutes: number): string => new Date(T0 + minutes * 60_000).toISOString();

/** A computed style property of the element, read in the page (this project's tsconfig has no DOM lib). */
function computed(locator: Locator, property: string): Promise<string> {
  return locator.evaluate((el, name) => {
    const view = globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> };
    return view.getComputedStyle(el)[name];
  }, property);
}

function agent(lastLine: string, extra: Partial<AgentView> = {}): AgentView {
  return { lastLine, elapsedMs: 95_000, step: 'implement', attempt: 1, usage: null, ...extra };
}

/** Three runs that overlap (1.1, 1.2, 1.3), one after them all (2.1), one never started (2.2). */
function runsTasks(): BoardTask[] {
  return [
    task('1.1', 'integrated', { startedAt: at(0), endedAt: at(10) }),
    task('1.2', 'integrated', { startedAt: at(1), endedAt: at(8), dependsOn: ['1.1'] }),
    task('1.3', 'blocked', { startedAt: at(2), endedAt: at(12), error: 'tests fail: 2 of 14' }),
    task('2.1', 'passed', { startedAt: at(15), endedAt: at(20), dependsOn: ['1.1', '1.2', '1.3'] }),
    task('2.2', 'pending', { dependsOn: ['2.1'] }),
  ];
}

describe('saga board page', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-board-page-'));
  const stub = new BoardStub(
    statusFixture(
      [
        task('1.1', 'running', { startedAt: ago(90), endedAt: null }),
        task('1.2', 'pending', { dependsOn: ['1.1'] }),
        task('2.1', 'pending', { dependsOn: ['1.1', '1.2', 'no-such-task'] }),
      ],
      [
        interaction('confirm-name', 'confirm-name', "Call this saga 'demo'?", ['confirm', 'rename']),
        interaction('question-1', 'question', `Which greeting? ${XSS}`, ['yes', 'no']),
      ],
    ),
    [
      {
        name: 'old',
        phase: 'complete',
        goal: 'Old goal',
        running: false,
        integrated: 2,
        total: 2,
        costUsd: 1,
        budgetUsd: null,
        waiting: 0,
        startedAt: '2026-01-01T00:00:00Z',
      },
      {
        name: 'demo',
        phase: 'implementation',
        goal: 'Add a greeting command',
        running: true,
        integrated: 0,
        total: 3,
        costUsd: 0.84,
        budgetUsd: 5,
        waiting: 2,
        startedAt: '2026-01-02T00:00:00Z',
      },
    ],
    { '1.1': agent('editing src/greet.ts') },
  );
  let base: string;
  let browser: BrowserContext;
  let page: Page;
  let dialogs: string[] = [];
  let pageErrors: string[] = [];

  beforeAll(async () => {
    base = await stub.start();
    ({ context: browser, page, dialogs, pageErrors } = await launchChromium(root));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stub.stop();
    rmSync(root, { recursive: true, force: true });
  });

  async function shot(name: string): Promise<void> {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, `board-${name}.png`), fullPage: true });
  }

  it('lists the sagas, running first, with the waiting badge; the token leaves the address bar', async () => {
    await page.goto(`${base}/?token=s3cret#/`);
    const rows = page.locator('tr.saga-row');
    await rows.first().waitFor();
    expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-saga')))).toEqual([
      'demo',
      'old',
    ]);
    await expect(page.locator('[data-saga="demo"] .badge.waiting').textContent()).resolves.toContain('2');
    expect(await page.locator('[data-saga="old"] .badge.waiting').count()).toBe(0);
    expect(page.url()).not.toContain('token');
    await shot('sagas');
  });

  it('shows the confirm-name card with the recommended option marked', async () => {
    await page.click('[data-saga="demo"] a');
    const card = page.locator('[data-interaction="confirm-name"]');
    await card.waitFor();
    expect(await card.locator('.prompt').textContent()).toBe("Call this saga 'demo'?");
    expect(await card.locator('button[data-recommended="true"]').getAttribute('data-choice')).toBe('confirm');
    expect(await card.locator('button.option').count()).toBe(2);
    await page.locator('[data-task="1.1"]').waitFor();
    await shot('saga');
  });

  it('draws the dependency graph from dependsOn: edges between task refs, no milestone gates', async () => {
    // The graph is closed until opened: graph.js (and dagre) load then, not with the page.
    const loaded = () =>
      page.evaluate(
        `performance.getEntriesByType('resource').map((e) => e.name).filter((n) => /graph|dagre/.test(n))`,
      );
    expect(await loaded()).toEqual([]);
    expect(await page.locator('.graph-box').getAttribute('open')).toBeNull();
    await page.click('.graph-box summary');
    await page.locator('svg.dag [data-node="1.1"]').waitFor();
    expect(((await loaded()) as string[]).map((n) => new URL(n).pathname).sort()).toEqual([
      '/graph.js',
      '/vendor/@dagrejs/dagre/dist/dagre.esm.js',
    ]);
    const edges = await page
      .locator('svg.dag path.edge')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-edge')).sort());
    expect(edges).toEqual(['1.1>1.2', '1.1>2.1', '1.2>2.1']); // the unknown ref draws nothing
    expect(await page.locator('svg.dag .node.gate').count()).toBe(0);
    expect(await page.locator('svg.dag .node').count()).toBe(3);
  });

  it('answers with {interactionId, choice} and the Bearer token', async () => {
    await page.click('[data-interaction="confirm-name"] button[data-choice="confirm"]');
    await page.locator('[data-interaction="confirm-name"] .card-ok').waitFor();
    expect(stub.responds).toHaveLength(1);
    expect(stub.responds[0].body).toEqual({ interactionId: 'confirm-name', choice: 'confirm' });
    expect(stub.responds[0].headers.authorization).toBe('Bearer s3cret');
    expect(stub.responds[0].headers['content-type']).toBe('application/json');
  });

  it("shows the server's refusal text on the card", async () => {
    stub.reply = { code: 409, body: { error: REFUSAL } };
    await page.click('[data-interaction="question-1"] button[data-choice="no"]');
    const error = page.locator('[data-interaction="question-1"] .card-error');
    await error.waitFor();
    expect(await error.textContent()).toBe(REFUSAL);
  });

  it('shows agent-written text as text: no script element is created', async () => {
    const prompt = page.locator('[data-interaction="question-1"] .prompt');
    expect(await prompt.textContent()).toBe(`Which greeting? ${XSS}`);
    expect(await page.locator('main script').count()).toBe(0);
    // index.html's own two: boot.js (opens the event stream early) and app.js.
    expect(await page.locator('script').evaluateAll((els) => els.map((e) => e.getAttribute('src')))).toEqual([
      '/boot.js',
      '/app.js',
    ]);
    expect(dialogs).toEqual([]);
  });

  it('opens a task: its transcript tail (as text) and diff', async () => {
    await page.click('[data-task="1.1"]');
    const transcript = page.locator('.task-detail .transcript');
    await page.locator('.task-detail .transcript', { hasText: 'agent line two' }).waitFor();
    expect(await transcript.textContent()).toBe('<b>agent line one</b>\nagent line two');
    await page.locator('.task-detail .diff .add').waitFor();
    expect(await page.locator('.task-detail .diff .add').textContent()).toBe('+new\n');
  });

  it('a hidden page lets go of its event stream and takes it up again when shown', async () => {
    const setVisibility = (state: string) =>
      page.evaluate(`Object.defineProperty(document, 'visibilityState', { value: '${state}', configurable: true });
        document.dispatchEvent(new Event('visibilitychange'))`);
    const streams = async (n: number) => {
      for (let i = 0; i < 50 && stub.openStreams() !== n; i++) await new Promise((r) => setTimeout(r, 50));
      return stub.openStreams();
    };
    expect(await streams(1)).toBe(1);
    await setVisibility('hidden');
    expect(await streams(0)).toBe(0);
    await setVisibility('visible');
    expect(await streams(1)).toBe(1);
    await page.locator('[data-task="1.1"]').waitFor();
  });

  it('changes a task card on a server-sent update', async () => {
    const card = page.locator('[data-task="1.1"]');
    expect(await card.getAttribute('data-status')).toBe('running');
    stub.status = statusFixture(
      [task('1.1', 'passed'), task('1.2', 'running'), task('2.1', 'pending')],
      stub.status.pending.slice(1),
    );
    stub.agents = {};
    stub.push();
    await page.locator('[data-task="1.1"][data-status="passed"]').waitFor();
    expect(await card.locator('.state').textContent()).toBe('passed');
    expect(await page.locator('[data-task="1.2"]').getAttribute('data-status')).toBe('running');
    expect(await page.locator('[data-interaction="confirm-name"]').count()).toBe(0);
    expect(await page.locator('svg.dag [data-node="1.1"]').getAttribute('class')).toContain('state-passed');
    expect(pageErrors).toEqual([]);
  });

  it('renders REPORT.md, sanitized, when the saga is complete', async () => {
    stub.report = '# Saga demo\n\nAll **3** tasks integrated.\n\n<img src="x" onerror="alert(2)">';
    stub.status = { ...stub.status, phase: 'complete', pending: [] };
    stub.push();
    await page.locator('.report .markdown h1').waitFor();
    expect(await page.locator('.report .markdown h1').textContent()).toBe('Saga demo');
    expect(await page.locator('.report .markdown strong').textContent()).toBe('3');
    expect(await page.locator('.report .markdown img').getAttribute('onerror')).toBeNull();
    expect(await page.locator('ol.timeline li.current').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('asks for the token when the page has none, and does not post without it', async () => {
    const fresh = await browser.newPage(); // sessionStorage is per tab
    await fresh.goto(`${base}/#/saga/demo`);
    stub.status = statusFixture(
      [task('1.1', 'running')],
      [interaction('q-2', 'question', 'Go on?', ['yes'])],
    );
    stub.push();
    await fresh.locator('form.token-form input[name="token"]').waitFor();
    const posts = stub.responds.length;
    await fresh.click('[data-interaction="q-2"] button[data-choice="yes"]');
    await fresh.locator('[data-interaction="q-2"] .card-error').waitFor();
    expect(stub.responds).toHaveLength(posts);
    await fresh.fill('form.token-form input[name="token"]', 'typed-token');
    await fresh.click('form.token-form button');
    stub.reply = { code: 200, body: { answer: { choice: 'yes' } } };
    await fresh.click('[data-interaction="q-2"] button[data-choice="yes"]');
    await fresh.locator('[data-interaction="q-2"] .card-ok').waitFor();
    expect(stub.responds.at(-1)?.headers.authorization).toBe('Bearer typed-token');
    await fresh.close();
  });

  it('sends the free text with an option that takes it, and asks for it when it is missing', async () => {
    const approval = {
      ...interaction('plan-approval-1', 'plan-approval', 'Approve plan v1?', ['approve', 'revise', 'reject']),
      textRequiredFor: ['revise'],
    };
    stub.status = statusFixture([task('1.1', 'pending')], [approval]);
    stub.push();
    const card = page.locator('[data-interaction="plan-approval-1"]');
    await card.waitFor();
    const posts = stub.responds.length;
    await card.locator('button[data-choice="revise"]').click();
    await card.locator('.card-error', { hasText: 'needs a text' }).waitFor();
    expect(stub.responds).toHaveLength(posts);
    await card.locator('textarea.answer-text').fill('Split task 1.1 in two.');
    await card.locator('button[data-choice="revise"]').click();
    await card.locator('.card-ok').waitFor();
    expect(stub.responds.at(-1)?.body).toEqual({
      interactionId: 'plan-approval-1',
      choice: 'revise',
      text: 'Split task 1.1 in two.',
    });
  });

  it("shows the running agent's live line, elapsed and usage, and follows the next status event", async () => {
    stub.status = statusFixture(
      [
        task('1.1', 'running', { startedAt: ago(100) }),
        task('1.2', 'blocked', { startedAt: ago(300), endedAt: ago(200), error: 'npm test failed' }),
        task('2.1', 'pending'),
      ],
      [],
    );
    stub.agents = {
      '1.1': agent('running npm test', {
        elapsedMs: 95_000,
        step: 'validate',
        usage: { inputTokens: 50_000, outputTokens: 7_000, costUsd: 1.23 },
      }),
      '1.2': agent('a stale line of a task that no longer runs'),
    };
    stub.push();
    const card = page.locator('[data-task="1.1"]');
    await card.locator('.line', { hasText: 'running npm test' }).waitFor();
    expect(await card.getAttribute('data-live')).toBe('true');
    expect(await card.locator('.elapsed').textContent()).toBe('1m 35s');
    expect(await card.locator('.usage').textContent()).toBe('50.0k↓ 7.0k↑ $1.23');
    expect(await card.locator('.step').textContent()).toBe('validate');
    const blocked = page.locator('[data-task="1.2"]');
    expect(await blocked.locator('.line').textContent()).toBe('npm test failed');
    expect(await blocked.locator('.line').getAttribute('class')).toContain('error');
    expect(await blocked.getAttribute('data-live')).toBeNull();
    expect(await blocked.locator('.elapsed').textContent()).toBe('1m 40s');

    stub.agents = { '1.1': agent(`wrote ${XSS} to src/greet.ts`, { elapsedMs: 125_000 }) };
    stub.push();
    await card.locator('.line', { hasText: 'wrote' }).waitFor();
    expect(await card.locator('.line').textContent()).toBe(`wrote ${XSS} to src/greet.ts`);
    expect(await card.locator('.elapsed').textContent()).toBe('2m 5s');
    expect(await card.locator('.usage').textContent()).toBe('12.0k↓ 3.4k↑ $0.42'); // the task's, no live usage
    expect(await page.locator('main script').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('packs the agent runs into rows: 3 overlapping runs and a later one make 3 rows, peak 3', async () => {
    stub.status = statusFixture(runsTasks(), []);
    stub.agents = {};
    stub.push();
    const runs = page.locator('section.runs[data-runs="4"]');
    await runs.waitFor();
    expect(await runs.getAttribute('data-rows')).toBe('3');
    expect(await runs.locator('.runs-caption').textContent()).toBe('peak 3 agents at once · 4 runs · 20m 0s');
    const rowOf = async (ref: string) => runs.locator(`[data-run="${ref}"]`).getAttribute('data-row');
    expect(await Promise.all(['1.1', '1.2', '1.3', '2.1'].map(rowOf))).toEqual(['0', '1', '2', '0']);
    expect(await runs.locator('[data-run="2.2"]').count()).toBe(0); // never started: not drawn
    expect(await runs.locator('[data-run] text').allTextContents()).toEqual(['1.1', '1.2', '1.3', '2.1']);
    expect(await runs.locator('[data-run="1.3"]').getAttribute('class')).toContain('state-blocked');
    expect(await computed(runs.locator('[data-run="1.3"] rect'), 'fill')).toBe('rgb(208, 69, 58)'); // --blocked
    const box = async (ref: string) => {
      const rect = runs.locator(`[data-run="${ref}"] rect`);
      return { x: Number(await rect.getAttribute('x')), w: Number(await rect.getAttribute('width')) };
    };
    const [first, later] = [await box('1.1'), await box('2.1')];
    expect(later.x).toBeGreaterThan(first.x + first.w); // 2.1 starts after 1.1 ended, on the same row
    expect(await runs.locator('text.tick').first().textContent()).toBe('0');

    await runs.locator('[data-run="1.2"] rect').click(); // a bar opens its task
    await page.locator('.task-detail[data-detail="1.2"]').waitFor();
    await runs.locator('[data-run="1.2"] rect').click();
    await page.locator('.task-detail').waitFor({ state: 'detached' });
  });

  it('draws a running run up to now and grows it live; no section while nothing started', async () => {
    stub.status = statusFixture(
      [
        task('1.1', 'integrated', { startedAt: ago(120), endedAt: ago(30) }),
        task('1.2', 'running', { startedAt: ago(60), endedAt: null }),
      ],
      [],
    );
    stub.agents = { '1.2': agent('thinking', { elapsedMs: 60_000 }) };
    stub.push();
    const runs = page.locator('section.runs[data-live="true"]');
    await runs.waitFor();
    expect(await runs.getAttribute('data-rows')).toBe('2');
    const width = async () => Number(await runs.locator('[data-run="1.2"] rect').getAttribute('width'));
    const right = async () =>
      Number(await runs.locator('[data-run="1.2"] rect').getAttribute('x')) + (await width());
    const chart = Number(await runs.locator('svg.runs-chart').getAttribute('width'));
    expect(Math.abs((await right()) - (chart - 4))).toBeLessThan(3); // reaches now, the right edge
    const before = await width();
    await page.waitForTimeout(1500);
    expect(await width()).toBeGreaterThan(before);

    stub.status = statusFixture([task('1.1', 'pending'), task('1.2', 'pending')], []);
    stub.agents = {};
    stub.push();
    await page.locator('section.runs').waitFor({ state: 'detached' });
    expect(pageErrors).toEqual([]);
  });

  it('shows exit criteria results by position, with the evidence path as text, and the budget', async () => {
    const criteria = ['E1: saga greet prints a greeting', 'E2: the tests pass', 'E3: docs are readable'];
    stub.status = statusFixture(runsTasks(), [], {
      phase: 'validation',
      planSummary: {
        version: 1,
        state: 'approved',
        problem: 'greet',
        milestones: 2,
        tasks: 5,
        exitCriteria: criteria,
        text: '',
        specPath: '/spec',
      },
    });
    stub.push();
    const items = page.locator('.criteria li.criterion');
    await items.first().waitFor();
    expect(await items.evaluateAll((els) => els.map((e) => e.getAttribute('data-result')))).toEqual([
      'not-run',
      'not-run',
      'not-run',
    ]);
    expect(await page.locator('.saga-head .cost').textContent()).toContain('/ $5.00'); // the list entry's

    stub.status = {
      ...stub.status,
      budgetUsd: 7.5,
      exitResults: [
        { id: 'E1', result: 'passed', evidence: `evidence/E1-${XSS}.txt` },
        { id: 'E2', result: 'failed', evidence: 'evidence/E2.log' },
        { id: 'E3', result: 'not-checkable', evidence: null },
      ],
    };
    stub.push();
    await page.locator('.criteria li[data-result="passed"]').waitFor();
    expect(await items.evaluateAll((els) => els.map((e) => e.getAttribute('data-result')))).toEqual([
      'passed',
      'failed',
      'not-checkable',
    ]);
    expect(await items.nth(0).locator('.criterion-text').textContent()).toBe(criteria[0]);
    expect(await items.nth(0).locator('.evidence code').textContent()).toBe(`evidence/E1-${XSS}.txt`);
    expect(await items.nth(1).locator('.verdict').textContent()).toBe('failed');
    expect(await items.nth(1).locator('.evidence code').textContent()).toBe('evidence/E2.log');
    expect(await items.nth(2).locator('.evidence').count()).toBe(0);
    expect(await items.nth(2).locator('.verdict').textContent()).toBe('not checkable');
    const colour = (i: number) => computed(items.nth(i).locator('.verdict'), 'color');
    expect(await colour(0)).toBe('rgb(47, 158, 106)'); // --passed
    expect(await colour(1)).toBe('rgb(208, 69, 58)'); // --blocked
    expect(await page.locator('.criteria .criteria-count').textContent()).toBe('1/3 passed');
    expect(await page.locator('.saga-head .cost').textContent()).toContain('/ $7.50'); // the status's own
    expect(await page.locator('main script').count()).toBe(0);
    await shot('saga-runs');
  });

  it('stays usable at 1,000 tasks: lanes, the cards in view and runs drawn, the graph replaced by a note', async () => {
    const start = Date.now() - 1000 * 30_000 - 300_000;
    const tasks = Array.from({ length: 1000 }, (_, k) => {
      const [m, n] = [k < 500 ? 1 : 2, (k % 500) + 1];
      const running = k >= 992;
      return task(`${m}.${n}`, running ? 'running' : 'integrated', {
        startedAt: new Date(start + k * 30_000).toISOString(),
        endedAt: running ? null : new Date(start + k * 30_000 + 240_000).toISOString(),
        dependsOn: n > 1 ? [`${m}.${n - 1}`] : [],
      });
    }); // each run lasts 4 minutes and one starts every 30 s: 8 at once
    stub.status = statusFixture(tasks, []);
    stub.agents = Object.fromEntries(tasks.slice(992).map((t) => [t.id, agent(`working on ${t.id}`)]));
    const pushed = Date.now();
    stub.push();
    const runs = page.locator('section.runs[data-runs="1000"]');
    await runs.waitFor();
    const firstRender = Date.now() - pushed;
    expect(await runs.getAttribute('data-rows')).toBe('8');
    expect(await runs.locator('.runs-caption').textContent()).toContain('peak 8 agents at once · 1000 runs');
    // Every lane with its counts; only the cards in view are built (a lane scrolls sideways).
    const lanes = page.locator('section.lane');
    expect(await lanes.evaluateAll((els) => els.map((e) => e.getAttribute('data-tasks')))).toEqual([
      '500',
      '500',
    ]);
    expect(await lanes.nth(1).locator('> header').textContent()).toContain('492/500');
    const built = await page.locator('article.task').count();
    expect(built).toBeGreaterThan(0);
    expect(built).toBeLessThan(100);
    expect(await page.locator('[data-task="2.500"]').count()).toBe(0);
    await lanes
      .nth(1)
      .locator('.cards')
      .evaluate((el) => {
        el.scrollLeft = el.scrollWidth;
      });
    await page.locator('[data-task="2.500"]').waitFor();
    expect(await page.locator('[data-task="2.500"] .line').textContent()).toBe('working on 2.500');
    expect(await page.locator('svg.dag').count()).toBe(0);
    expect(await page.locator('.graph .graph-note').textContent()).toContain('1000 tasks, more than 400');

    stub.agents = { ...stub.agents, '2.500': agent('the next line') };
    const again = Date.now();
    stub.push();
    await page.locator('[data-task="2.500"] .line', { hasText: 'the next line' }).waitFor();
    const update = Date.now() - again;
    expect(firstRender).toBeLessThan(5000);
    expect(update).toBeLessThan(2000);
    expect(pageErrors).toEqual([]);
  });

  it('applies status deltas in order, and takes the whole view again from a reopened stream on a gap', async () => {
    const statusOf = (ref: string) => page.locator(`[data-task="${ref}"]`).getAttribute('data-status');
    stub.status = statusFixture([task('1.1', 'running'), task('1.2', 'pending')], []);
    stub.agents = {};
    stub.sendEvent('status', stub.detail(), 7);
    await page.locator('[data-task="1.2"][data-status="pending"]').waitFor();
    const step = [['status', 'milestones', 0, 'tasks', 1, 'status'], 'running'];
    stub.sendEvent('status-delta', { name: 'demo', from: 7, to: 8, ops: [step] }, 8);
    await page.locator('[data-task="1.2"][data-status="running"]').waitFor();
    expect(await statusOf('1.1')).toBe('running');
    const opened = stub.opened;
    // Version 9 never came: the delta from 9 is not applied, the stream reopens and brings the whole view.
    stub.status = statusFixture([task('1.1', 'passed'), task('1.2', 'passed')], []);
    const lost = [['status', 'milestones', 0, 'tasks', 0, 'title'], 'never applied'];
    stub.sendEvent('status-delta', { name: 'demo', from: 9, to: 10, ops: [lost] }, 10);
    await page.locator('[data-task="1.1"][data-status="passed"]').waitFor();
    expect(stub.opened).toBe(opened + 1);
    expect(await statusOf('1.2')).toBe('passed');
    expect(await page.locator('[data-task="1.1"] .title').textContent()).not.toBe('never applied');
    expect(pageErrors).toEqual([]);
  });

  it('without SharedWorker (some mobile browsers), a page holds its own stream and still shows changes', async () => {
    const own = await browser.newPage();
    await own.addInitScript('delete window.SharedWorker');
    const opened = stub.opened;
    await own.goto(`${base}/?token=s3cret#/saga/demo`);
    await own.locator('[data-task="1.1"]').waitFor();
    expect(stub.opened).toBe(opened + 1);
    stub.status = statusFixture([task('1.1', 'blocked'), task('1.2', 'passed')], []);
    stub.push();
    await own.locator('[data-task="1.1"][data-status="blocked"]').waitFor();
    await own.close();
  });
});
