/**
 * The saga board's pull requests (src/client/board/public/pull-requests.js) in real Chromium against the
 * board stub: each PR of `status.pullRequests` with its link, head → base, stage, CI and failing checks,
 * fixes and listed comments (forge text shown as text); no section for a saga without pull requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../../harness/chromium';
import { BoardStub, statusFixture, task } from '../../../harness/board-stub';
import { pullRequestPair, XSS_TEXT } from '../../../harness/pull-request-fixture';

describe('saga board: pull requests', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-board-prs-'));
  const stub = new BoardStub(statusFixture([task('1.1', 'integrated')], []), []);
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

  it('shows no section without pull requests, then each PR once the status has them', async () => {
    await page.goto(`${base}/?token=s3cret#/saga/demo`);
    await page.locator('.saga-head').waitFor();
    expect(await page.locator('section.pull-requests').count()).toBe(0);

    stub.status = { ...stub.status, pullRequests: pullRequestPair() };
    stub.push();
    const prs = page.locator('section.pull-requests li.pr');
    await prs.first().waitFor();
    expect(await prs.evaluateAll((els) => els.map((e) => e.getAttribute('data-pr')))).toEqual(['12', '13']);

    const first = prs.nth(0);
    expect(await first.locator('a').getAttribute('href')).toBe('https://forge.example/alice/demo/pulls/12');
    expect(await first.locator('a').textContent()).toBe('#12 ↗');
    expect(await first.locator('.pr-branches').textContent()).toBe('saga/demo/deliver-m1 → main');
    expect(await first.locator('.pr-stage').textContent()).toBe('ready');
    expect(await first.locator('.pr-ci').textContent()).toBe('CI failing: lint, test (node 22)');
    expect(await first.locator('.pr-fixes').textContent()).toBe('1 CI fix, 2 review fixes');
    const comments = first.locator('.pr-comments li');
    expect((await comments.allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim())).toEqual([
      'comment by carol on src/a.ts:3: not acted on (no write access)',
      `comment by ci-bot on README.md:1 ${XSS_TEXT}: not acted on (a bot)`,
    ]);
    expect(await page.locator('section.pull-requests img').count()).toBe(0);

    const second = prs.nth(1);
    expect(await second.locator('.pr-stage').textContent()).toBe('draft');
    expect(await second.locator('.pr-ci').textContent()).toBe('CI pending');
    expect(await second.locator('.pr-fixes').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
