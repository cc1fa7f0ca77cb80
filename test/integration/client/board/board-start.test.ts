/**
 * Starting and steering from the board, as a user does it: `bin/saga board --repo PATH` on the real Temporal
 * server with a real worker and the demo agent, the page in real Chromium. A saga started from the new-saga
 * form appears on the list and runs (its name confirmed on the form, recorded as board:tester); bad input
 * (an empty goal, a bad flag, a repository the board does not know) gets a clear error and starts nothing; a
 * start without the token or from another origin is refused. At 390 px the pending card's buttons are in
 * view and answer, and the list and the form fit; the budget card raises; Cancel cancels. Notifications:
 * board-notify.test.ts.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { answersQuery } from '../../../../src/domain/saga/messages';
import { startBoardProcess, type BoardProcess } from '../../../harness/board-process';
import { launchChromium, type Browser } from '../../../harness/chromium';
import { runSaga } from '../../../harness/cli';
import { cancelSagaQuietly, greetingScript } from '../../../harness/greeting-saga';
import { ARTIFACTS_ROOT } from '../../../harness/server';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

jest.setTimeout(240_000);

const TOKEN = 'board-start-token-0123456789abcdef';
const QUESTION = 'How should the greeting be punctuated? \u001b[31m<b>bold?</b>';
const NAME = `boardstart-${Date.now().toString(36)}`;

describe('starting and steering from the board (bin/saga board, real server, Chromium)', () => {
  let env: SagaTestEnv;
  let board: BoardProcess;
  let browser: Browser;
  let page: Page;
  let repo: string;

  const sagaNames = async () => {
    const r = await runSaga(['list', '--json'], env.cliEnv);
    return r.stdout;
  };
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${board.url}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const auth = { authorization: `Bearer ${TOKEN}` };
  const card = (id: string) => page.locator(`[data-interaction="${id}"]`);
  const shot = async (file: string) => {
    mkdirSync(path.join(ARTIFACTS_ROOT, 'screenshots'), { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS_ROOT, 'screenshots', file), fullPage: true });
  };

  beforeAll(async () => {
    env = await createSagaTestEnv('boardstart');
    await env.startWorkers();
    // Each task run costs $0.05 against the $0.04 budget the form sets: after task 1.1 the saga asks.
    const run = (files: Record<string, string>) => ({
      attempts: [{ files, usage: { input_tokens: 1000, output_tokens: 200, cost_usd: 0.05 } }],
    });
    repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      script: greetingScript(run, QUESTION),
    });
    board = await startBoardProcess({ ...env.cliEnv, SAGA_BOARD_TOKEN: TOKEN }, [
      '--repo',
      repo,
      '--user',
      'tester',
    ]);
    browser = await launchChromium(env.tmp('chromium'));
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.context.close();
    await board?.stop();
    await cancelSagaQuietly(env, NAME);
    await env?.close();
  });

  it('refuses a start without the token (401) and from another origin (403)', async () => {
    const body = { repo, goal: 'Add a greeting', confirm: true, name: NAME };
    const noToken = await post('/api/sagas', body);
    expect(noToken.status).toBe(401);
    const elsewhere = await post('/api/sagas', body, { ...auth, origin: 'http://evil.example' });
    expect(elsewhere.status).toBe(403);
    expect(((await elsewhere.json()) as { error: string }).error).toMatch(/Cross-site/);
    expect(await sagaNames()).not.toContain(NAME);
  });

  it('refuses bad input with a clear error, starting nothing', async () => {
    const refused = async (body: unknown) => {
      const res = await post('/api/sagas', body, auth);
      return { status: res.status, error: ((await res.json()) as { error: string }).error };
    };
    const good = { repo, goal: 'Add a greeting', confirm: true, name: NAME };
    expect(await refused({ ...good, repo: '/etc' })).toEqual({
      status: 400,
      error:
        "repo: '/etc' is not one of the board's repositories (those of the sagas it lists and each `saga board --repo PATH`).",
    });
    expect(await refused({ ...good, flags: '--bogus' })).toMatchObject({
      status: 400,
      error: expect.stringMatching(/^Saga: Unknown flag '--bogus'\. Supported flags: --autonomous, /),
    });
    expect(await refused({ ...good, flags: 'hello' })).toMatchObject({
      error: "flags: 'hello' is not a flag (flags start with --; the goal has its own field).",
    });
    expect(await refused({ ...good, budgetUsd: -1 })).toMatchObject({
      status: 400,
      error: expect.stringMatching(/^Body: budgetUsd: /),
    });
    expect(await sagaNames()).not.toContain(NAME);

    // The form shows the server's error for an empty goal.
    await page.goto(`${board.url}/?token=${TOKEN}#/`);
    await page.locator('button.new-saga-open').click();
    await page.locator('form.new-saga select[name="repo"]').waitFor();
    await page.locator('form.new-saga button.check').click();
    await page
      .locator('form.new-saga .form-error', { hasText: 'goal: write what the saga should do.' })
      .waitFor();
    expect(await sagaNames()).not.toContain(NAME);
  });

  it("a repository with uncommitted changes: the error names the form's box, which lets the check pass", async () => {
    const notes = path.join(repo, 'notes.txt');
    writeFileSync(notes, 'not committed\n');
    try {
      const form = page.locator('form.new-saga');
      await form.locator('textarea[name="goal"]').fill('Add a greeting');
      await form.locator('button.check').click();
      const error = form.locator('.form-error', { hasText: 'has uncommitted changes (notes.txt)' });
      await error.waitFor();
      expect(await error.textContent()).toContain("(or tick 'Start with uncommitted changes').");
      const box = form.locator('input[name="allowDirty"]');
      await box.check();
      await form.locator('button.check').click();
      await form.locator('button.start').waitFor();
      const proposed = await form.locator('input[name="name"]').inputValue();
      expect(proposed).toMatch(/^add-a-greeting-/);
      // Unticked, the proposal is gone: it was for a dirty start.
      await box.uncheck();
      await form.locator('button.check').waitFor();
      expect(await sagaNames()).not.toContain(proposed);
    } finally {
      rmSync(notes);
    }
  });

  it('starts a saga from the form: it appears on the list and runs, its name confirmed as board:tester', async () => {
    const form = page.locator('form.new-saga');
    expect(await form.locator('select[name="repo"] option').allTextContents()).toContain(repo);
    await form.locator('textarea[name="goal"]').fill('Add a greeting');
    await form.locator('input[name="budget"]').fill('0.04');
    await form.locator('button.check').click();
    // The check proposes a name; the user names it, and Start is the confirmation.
    const nameField = form.locator('input[name="name"]');
    await form.locator('button.start').waitFor();
    expect(await nameField.inputValue()).toMatch(/^add-a-greeting-\d{8}-\d{4}$/);
    await nameField.fill(NAME);
    await form.locator('button.start').click();
    await page.locator('.form-ok', { hasText: `Started ${NAME}` }).waitFor();
    await page.locator(`tr.saga-row[data-saga="${NAME}"]`).waitFor();
    const handle = env.client.workflow.getHandle(sagaWorkflowId(NAME));
    const status = await waitForPending(env, NAME, /^q1-/, 90_000);
    expect(status.pending.map((p) => p.id)).not.toContain('confirm-name');
    expect((await handle.query(answersQuery))[0]).toMatchObject({
      interactionId: 'confirm-name',
      choice: 'confirm',
      user: 'board:tester',
    });
  });

  it('at 390 px the pending card fits, and its button answers (recorded as board:tester)', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${board.url}/#/saga/${NAME}`);
    const question = card((await waitForPending(env, NAME, /^q1-/)).pending[0]!.id);
    await question.waitFor();
    for (const button of await question.locator('button.option').all()) {
      const box = (await button.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
      expect(await button.isVisible()).toBe(true);
    }
    const widths = (await page.evaluate(
      '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
    )) as { scroll: number; client: number };
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    await shot('board-start-390-card.png');
    const id = (await question.getAttribute('data-interaction'))!;
    await question.locator('button[data-recommended="true"]').click();
    await question.waitFor({ state: 'detached' });
    const answers = await env.client.workflow.getHandle(sagaWorkflowId(NAME)).query(answersQuery);
    expect(answers.find((a) => a.interactionId === id)).toMatchObject({ user: 'board:tester' });
  });

  it('at 390 px the list and the new-saga form fit the width', async () => {
    await page.goto(`${board.url}/#/`);
    await page.locator(`tr.saga-row[data-saga="${NAME}"]`).waitFor();
    await page.locator('button.new-saga-open').click();
    const form = page.locator('form.new-saga');
    await form.locator('select[name="repo"]').waitFor();
    const widths = (await page.evaluate(
      '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
    )) as { scroll: number; client: number };
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    for (const field of await form.locator('select, textarea, input, button').all()) {
      const box = (await field.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(390);
    }
    await shot('board-start-390-form.png');
    const row = (await page.locator(`tr.saga-row[data-saga="${NAME}"]`).boundingBox())!;
    expect(row.x + row.width).toBeLessThanOrEqual(390);
  });

  it('the plan approval is answered through the board', async () => {
    await waitForPending(env, NAME, 'plan-approval-1', 90_000);
    await page.goto(`${board.url}/#/saga/${NAME}`);
    await card('plan-approval-1').locator('button[data-choice="approve"]').click();
    await card('plan-approval-1').waitFor({ state: 'detached' });
  });

  it('the budget card takes an amount: Raise sends it as the raise text, and the saga goes on', async () => {
    const budget = page.locator('.interaction.kind-budget');
    await budget.waitFor({ timeout: 90_000 });
    const id = (await budget.getAttribute('data-interaction'))!;
    expect(await budget.locator('button[data-choice="stop"]').isVisible()).toBe(true);
    await budget.locator('input.budget-amount').fill('+1');
    await budget.locator('button[data-choice="raise"]').click();
    await budget.waitFor({ state: 'detached' });
    const answers = await env.client.workflow.getHandle(sagaWorkflowId(NAME)).query(answersQuery);
    expect(answers.find((a) => a.interactionId === id)).toMatchObject({
      choice: 'raise',
      text: '+1',
      user: 'board:tester',
    });
    await page.locator('.saga-head', { hasText: '/ $1.04' }).waitFor({ timeout: 10_000 });
  });

  it('Cancel, after its confirm step, cancels the running saga', async () => {
    await page.locator('button.cancel-open').click();
    await page.locator('button.cancel-yes').click();
    await page.locator('.cancel-requested').waitFor();
    await waitForStatus(env, NAME, (s) => s.phase === 'cancelled', 90_000);
    await page.locator('.saga-head .phase-cancelled').waitFor({ timeout: 30_000 });
    expect(await page.locator('button.cancel-open').count()).toBe(0);
    // Once the saga has closed (its clean-up done), a second cancel is refused: it no longer runs.
    const handle = env.client.workflow.getHandle(sagaWorkflowId(NAME));
    for (let i = 0; i < 300 && (await handle.describe()).status.name === 'RUNNING'; i++)
      await page.waitForTimeout(200);
    const closed = (await handle.describe()).status.name;
    expect(closed).not.toBe('RUNNING');
    const again = await post(`/api/sagas/${NAME}/cancel`, {}, auth);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: string }).error).toBe(
      `Saga '${NAME}' is not running any more (${closed}).`,
    );
    expect(browser.pageErrors).toEqual([]);
  });
});
