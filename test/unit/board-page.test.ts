/**
 * The saga board's page (issue 32) in real Chromium (Debian's `chromium`, driven by playwright-core)
 * against a stub of the board server (test/harness/board-stub.ts; the real server's end-to-end test is
 * separate): the sagas list with its waiting badge, the confirm-name card with the recommended option,
 * an answer POSTed with the Bearer token, a refusal's text on the card, agent text shown as text, and a
 * task card that changes state on a server-sent event.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { BoardStub, interaction, statusFixture, task } from '../harness/board-stub';
import { ARTIFACTS_ROOT } from '../harness/server';

const CHROMIUM = process.env.SAGA_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
];
const SCREENSHOTS = path.join(ARTIFACTS_ROOT, 'screenshots');
const XSS = '<script>alert(1)</script>';
const REFUSAL = "Interaction 'question-1' has no option 'nope'; the options are: yes, no.";

describe('saga board page', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-board-page-'));
  const stub = new BoardStub(
    statusFixture(
      [
        task('1.1', 'running', { lastLine: 'editing src/greet.ts' } as object),
        task('1.2', 'pending'),
        task('2.1', 'pending'),
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
  );
  let base: string;
  let browser: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    base = await stub.start();
    browser = await chromium.launchPersistentContext(path.join(root, 'chromium'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1400, height: 1000 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
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
    await page.locator('svg.dag [data-node="1.1"]').waitFor();
    await shot('saga');
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
    expect(await page.locator('script').count()).toBe(1); // app.js alone
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

  it('changes a task card on a server-sent update', async () => {
    const card = page.locator('[data-task="1.1"]');
    expect(await card.getAttribute('data-status')).toBe('running');
    stub.status = statusFixture(
      [task('1.1', 'passed'), task('1.2', 'running'), task('2.1', 'pending')],
      stub.status.pending.slice(1),
    );
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
});
