/**
 * The saga board end to end, as a user runs it: a saga started through `bin/saga start`, the board
 * from `bin/saga board`, both on the real Temporal server with a real worker and the demo agent, the page in
 * real Chromium. The confirm-name and planner questions appear as cards; clicking the recommended option
 * moves the saga on (seen on the page and in `saga status`); a wrong answer and an answer without the token
 * are refused and change nothing; a planner question with `<script>` in it shows as text; task cards change
 * state live while the agents run.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import { startBoardProcess, type BoardProcess } from '../../../harness/board-process';
import { launchChromium, type Browser } from '../../../harness/chromium';
import { runSaga } from '../../../harness/cli';
import { cancelSagaQuietly, greetingScript } from '../../../harness/greeting-saga';
import { createSagaTestEnv, type SagaTestEnv } from '../../../harness/saga-env';
import { ARTIFACTS_ROOT } from '../../../harness/server';

jest.setTimeout(180_000);

const TOKEN = 'board-e2e-token-0123456789abcdef';
const XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
const QUESTION = `How should the greeting be punctuated? ${XSS}`;
const SCREENSHOTS = path.join(ARTIFACTS_ROOT, 'screenshots');
/** Each task's agent runs this long, printing progress: long enough to see it running on the page. */
const AGENT_MS = 2_500;

describe('saga board end to end (bin/saga, real server, Chromium)', () => {
  let env: SagaTestEnv;
  let board: BoardProcess;
  let browser: Browser;
  let page: Page;
  const name = `boarde2e-${Date.now().toString(36)}`;

  const sagaStatus = async () => {
    const r = await runSaga(['status', name, '--json'], env.cliEnv);
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as { phase: string; pending: { id: string }[] };
  };
  const card = (id: string) => page.locator(`[data-interaction="${id}"]`);
  const shot = async (file: string) => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true });
  };

  beforeAll(async () => {
    env = await createSagaTestEnv('boarde2e');
    await env.startWorkers();
    // Each run costs $0.05 against a saga budget of $0.04: after task 1.1 the saga asks to raise it.
    const slow = (files: Record<string, string>) => ({
      attempts: [
        { files, sleep_ms: AGENT_MS, usage: { input_tokens: 1000, output_tokens: 200, cost_usd: 0.05 } },
      ],
    });
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      configExtra: 'budget:\n  saga_usd: 0.04\n',
      script: greetingScript(slow, QUESTION),
    });
    const started = await runSaga(
      ['start', '--repo', repo, '--name', name, '--', 'Add a greeting'],
      env.cliEnv,
    );
    expect(started.code).toBe(0);
    board = await startBoardProcess({ ...env.cliEnv, SAGA_BOARD_TOKEN: TOKEN });
    browser = await launchChromium(env.tmp('chromium'));
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.context.close();
    await board?.stop();
    await cancelSagaQuietly(env, name);
    await env?.close();
  });

  it('lists the saga waiting for an answer', async () => {
    await page.goto(`${board.url}/?token=${TOKEN}#/`);
    const row = page.locator(`tr.saga-row[data-saga="${name}"]`);
    await row.locator('.badge.waiting').waitFor();
    await shot('board-e2e-sagas.png');
    await row.locator('a').first().click();
    await card('confirm-name').waitFor();
  });

  it('refuses an answer without the token (401), and nothing changes', async () => {
    const refused = await page.evaluate(
      async ({ saga }) => {
        const res = await fetch(`/api/sagas/${saga}/respond`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ interactionId: 'confirm-name', choice: 'confirm' }),
        });
        return { status: res.status, body: (await res.json()) as { error: string } };
      },
      { saga: name },
    );
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatch(/token/);
    expect((await sagaStatus()).pending.map((p) => p.id)).toEqual(['confirm-name']);
  });

  it('clicking the recommended option moves the saga on: the planner question appears, with <script> as text', async () => {
    const confirm = card('confirm-name');
    expect(await confirm.locator('button[data-recommended="true"]').getAttribute('data-choice')).toBe(
      'confirm',
    );
    await confirm.locator('button[data-recommended="true"]').click();
    await confirm.waitFor({ state: 'detached' });
    expect((await sagaStatus()).pending.map((p) => p.id)).not.toContain('confirm-name');

    const question = page.locator('[data-interaction]', {
      hasText: 'How should the greeting be punctuated?',
    });
    await question.waitFor({ timeout: 60_000 });
    expect(await question.locator('.prompt').textContent()).toContain(XSS);
    expect(await question.locator('script, img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(browser.dialogs).toEqual([]);
    const id = await question.getAttribute('data-interaction');
    await question.locator('button[data-recommended="true"]').click();
    await question.waitFor({ state: 'detached' });
    expect((await sagaStatus()).pending.map((p) => p.id)).not.toContain(id);
  });

  it('task cards change state live while the agents run, up to the plan approval and past it', async () => {
    // Whatever else planning asks (the plan approval), the recommended answer each time.
    const seen: string[] = [];
    await page.exposeFunction('recordTaskState', (line: string) => seen.push(line));
    for (let i = 0; i < 10; i++) {
      const next = page.locator('[data-interaction]').first();
      const phase = page.locator('.timeline[data-phase="implementation"]');
      await Promise.race([next.waitFor({ timeout: 60_000 }), phase.waitFor({ timeout: 60_000 })]);
      if (await phase.count()) break;
      const recommended = next.locator('button[data-recommended="true"]');
      await ((await recommended.count()) ? recommended : next.locator('button.option').first()).click();
      await next.waitFor({ state: 'detached' });
    }
    await page.locator('[data-task="1.1"]').waitFor();
    // Every change of a card's data-status, as the page applies it.
    await page.evaluate(`new MutationObserver((records) => {
      for (const r of records)
        if (r.target.dataset && r.target.dataset.task)
          window.recordTaskState(r.target.dataset.task + ':' + r.target.dataset.status);
    }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-status'] })`);
    await page.locator('[data-task="1.1"][data-status="running"]').waitFor({ timeout: 60_000 });
    expect((await sagaStatus()).phase).toBe('implementation');
    await shot('board-e2e-saga.png');
    await page.locator('[data-task="1.1"][data-status="passed"]').waitFor({ timeout: 90_000 });
    // Seen live on the page: the card showed 1.1 running, then changed to passed without a reload.
    expect(seen).toContain('1.1:passed');
    expect(browser.pageErrors).toEqual([]);
  });

  it('refuses a wrong answer with the Update’s own error on the card, and nothing changes', async () => {
    const budget = page.locator('.interaction.kind-budget');
    await budget.waitFor({ timeout: 60_000 });
    const id = (await budget.getAttribute('data-interaction'))!;
    await budget.locator('input.budget-amount').fill('lots');
    await budget.locator('button[data-choice="raise"]').click();
    const error = budget.locator('.card-error');
    await error.waitFor();
    expect(await error.textContent()).toBe(
      "'lots' is not a budget: pass the new amount in USD (e.g. --text 20) or the raise (e.g. --text +5).",
    );
    expect((await sagaStatus()).pending.map((p) => p.id)).toContain(id);

    // The right text goes through the same card and the fleet goes on.
    await budget.locator('input.budget-amount').fill('+1');
    await budget.locator('button[data-choice="raise"]').click();
    await budget.waitFor({ state: 'detached' });
    expect((await sagaStatus()).pending.map((p) => p.id)).not.toContain(id);
    await page.locator('[data-task="1.2"][data-status="running"]').waitFor({ timeout: 60_000 });
    // The header's budget is the fleet's, raised by the answer.
    await page.locator('.saga-head', { hasText: '/ $1.04' }).waitFor({ timeout: 10_000 });
    await page.locator('[data-task="1.1"][data-status="integrated"]').waitFor({ timeout: 90_000 });
  });
});
