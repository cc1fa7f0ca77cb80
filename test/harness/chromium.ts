/** Headless Chromium for the board's browser tests and benchmark (Debian's `chromium`, driven by playwright-core). */
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS } from '../../bench/chromium';

export { CHROMIUM };

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Dialogs the page opened (an alert from injected script would land here); page errors and console errors. */
  dialogs: string[];
  pageErrors: string[];
}

/** A fresh browser profile under `root`, one page, dialogs dismissed and recorded. */
export async function launchChromium(root: string): Promise<Browser> {
  const context = await chromium.launchPersistentContext(path.join(root, 'chromium'), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 1000 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    // A render that throws inside an event handler is logged ('bad board event'), not a page error.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(m.text());
  });
  return { context, page, dialogs, pageErrors };
}
