/**
 * The board's desktop notifications, as a user gets them: `bin/saga board` on the real Temporal server with a
 * real worker and the demo agent, the page in real Chromium with the notifications permission granted to the
 * board's origin. Turned on by a click; a saga that starts waiting (started by `bin/saga start`) shows one
 * notification per interaction through the board's service worker (read back with getNotifications()),
 * with its question as plain text, not again in a second tab; a hidden tab (its event stream closed) still
 * notifies; the page route a notification's click uses opens that saga's card.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import { startBoardProcess, type BoardProcess } from '../../../harness/board-process';
import { launchChromium, type Browser } from '../../../harness/chromium';
import { runSaga } from '../../../harness/cli';
import { cancelSagaQuietly, greetingScript } from '../../../harness/greeting-saga';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../../harness/saga-env';

jest.setTimeout(180_000);

const TOKEN = 'board-notify-token-0123456789abcdef';
const QUESTION = 'How should the greeting be punctuated? \u001b[31m<b>bold?</b>';
const NAME = `boardnotify-${Date.now().toString(36)}`;
const HIDDEN_NAME = `${NAME}-b`;
/** Waiting before notifications are turned on: never notified, and its questions are never read for them. */
const EARLY_NAME = `${NAME}-early`;

interface Shown {
  title: string;
  body: string;
  data: { saga: string; interaction: string };
}

describe('desktop notifications from the board (bin/saga board, real server, Chromium)', () => {
  let env: SagaTestEnv;
  let board: BoardProcess;
  let browser: Browser;
  let page: Page;
  let repo: string;

  // The service worker's notifications as the page reads them (in-page code: a string, the tests have no DOM types).
  const notifications = (p: Page = page) =>
    p.evaluate(`navigator.serviceWorker.ready
      .then((registration) => registration.getNotifications())
      .then((shown) => shown.map((n) => ({ title: n.title, body: n.body, data: n.data })))`) as Promise<
      Shown[]
    >;
  const shownFor = async (saga: string, interaction: string) => {
    let shown: Shown[] = [];
    const mine = () => shown.filter((n) => n.data.saga === saga && n.data.interaction === interaction);
    for (let i = 0; i < 150 && mine().length === 0; i++) {
      await page.waitForTimeout(200);
      shown = await notifications();
    }
    return mine();
  };
  const closeAll = () =>
    page.evaluate(
      'navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((s) => s.forEach((n) => n.close()))',
    );
  const start = async (name: string) => {
    const started = await runSaga(
      ['start', '--repo', repo, '--name', name, '--', 'Add a greeting'],
      env.cliEnv,
    );
    expect(started.code).toBe(0);
  };

  beforeAll(async () => {
    env = await createSagaTestEnv('boardnotify');
    await env.startWorkers();
    repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      script: greetingScript((files) => ({ attempts: [{ files }] }), QUESTION),
    });
    board = await startBoardProcess({ ...env.cliEnv, SAGA_BOARD_TOKEN: TOKEN });
    browser = await launchChromium(env.tmp('chromium'));
    await browser.context.grantPermissions(['notifications'], { origin: board.url });
    page = browser.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.context.close();
    await board?.stop();
    await cancelSagaQuietly(env, NAME);
    await cancelSagaQuietly(env, HIDDEN_NAME);
    await cancelSagaQuietly(env, EARLY_NAME);
    await env?.close();
  });

  it('turns on by a click, then shows one notification when a saga starts waiting, not again in a second tab', async () => {
    await start(EARLY_NAME);
    await waitForPending(env, EARLY_NAME, /^confirm-name$/);
    const earlyReads: string[] = [];
    page.on('request', (r) => r.url().includes(`/api/sagas/${EARLY_NAME}`) && earlyReads.push(r.url()));
    await page.goto(`${board.url}/?token=${TOKEN}#/`);
    await page.locator(`tr.saga-row[data-saga="${EARLY_NAME}"] .badge.waiting`).waitFor();
    await page.locator('button.notify-enable').click();
    await page.locator('.notify-on').waitFor();
    await start(NAME);
    const mine = await shownFor(NAME, 'confirm-name');
    expect(mine).toHaveLength(1);
    // The saga that already waited cost the page no read of its questions, and got no notification.
    expect(earlyReads).toEqual([]);
    expect((await notifications()).filter((n) => n.data.saga === EARLY_NAME)).toEqual([]);
    expect(mine[0]!.title).toBe(`Saga ${NAME} waits for you (confirm-name)`);
    // Another tab of the same browser, and more events: the interaction is not shown again.
    await closeAll();
    const second = await browser.context.newPage();
    await second.goto(`${board.url}/?token=${TOKEN}#/saga/${NAME}`);
    await second.locator('[data-interaction="confirm-name"]').waitFor();
    await page.goto(`${board.url}/#/saga/${NAME}`);
    await page.locator('[data-interaction="confirm-name"]').waitFor();
    await page.waitForTimeout(2_000);
    expect((await notifications()).filter((n) => n.data.interaction === 'confirm-name')).toEqual([]);
    await second.close();
  });

  it('shows the next question with its text as one plain line', async () => {
    await page.locator('[data-interaction="confirm-name"] button[data-choice="confirm"]').click();
    const question = (await waitForPending(env, NAME, /^q1-/)).pending[0]!;
    const mine = await shownFor(NAME, question.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.title).toBe(`Saga ${NAME} waits for you (${question.kind})`);
    // The escape character gone, the markup left as the text it is.
    expect(mine[0]!.body).toContain('How should the greeting be punctuated? [31m<b>bold?</b>');
    expect(mine[0]!.body).not.toContain('\u001b');
  });

  it('a hidden tab (its event stream closed) still notifies: a saga started meanwhile by the CLI', async () => {
    await page.goto(`${board.url}/#/`);
    await page.locator('.live.on').waitFor();
    // What the browser does to a tab in the background; app.js then closes the tab's event stream.
    await page.evaluate(
      "Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });" +
        "document.dispatchEvent(new Event('visibilitychange'))",
    );
    await page.locator('.live.off').waitFor();
    await start(HIDDEN_NAME);
    expect(await shownFor(HIDDEN_NAME, 'confirm-name')).toHaveLength(1);
    expect(await page.locator('.live.off').count()).toBe(1);
    await page.evaluate(
      "delete document.visibilityState; document.dispatchEvent(new Event('visibilitychange'))",
    );
    await page.locator('.live.on').waitFor();
  });

  it("a notification's click route opens that saga's card", async () => {
    const question = (await waitForPending(env, NAME, /^q1-/)).pending[0]!;
    await page.locator(`tr.saga-row[data-saga="${NAME}"]`).waitFor();
    // What sw.js posts to a board tab on a click (a page cannot click a notification itself).
    const data = { type: 'saga-board-open-card', saga: NAME, interaction: question.id };
    await page.evaluate(
      `navigator.serviceWorker.dispatchEvent(new MessageEvent('message', { data: ${JSON.stringify(data)} }))`,
    );
    await page.locator(`[data-interaction="${question.id}"][data-opened="true"]`).waitFor();
    expect(page.url()).toContain(`#/saga/${NAME}`);
    expect(await page.evaluate('document.activeElement.dataset.interaction')).toBe(question.id);
    expect(browser.pageErrors).toEqual([]);
  });
});
