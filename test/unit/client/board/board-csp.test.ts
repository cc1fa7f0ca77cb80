/**
 * The board page under its Content-Security-Policy, in real Chromium: the page itself works with it (no
 * violation of its own), REPORT.md's remote images (Markdown, HTML, protocol-relative, backslash forms) load
 * nothing, and what the sanitizer would miss, the policy still refuses: an image or inline script put in
 * the page directly reaches no other server and does not run. The page's document comes from the real board
 * app (its real headers); the API from the stub.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { boardApp, BOARD_CSP, type BoardContext } from '../../../../src/client/board/routes';
import { launchChromium, type Browser } from '../../../harness/chromium';
import { BoardStub, statusFixture, task } from '../../../harness/board-stub';

describe('board Content-Security-Policy', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-board-csp-'));
  const stub = new BoardStub(statusFixture([task('1.1', 'integrated')], []), []);
  /** Another server, standing in for the remote host an agent's image would report to. */
  const hits: string[] = [];
  const tracker = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/png' }).end();
  });
  let base: string;
  let remote: string;
  let browser: Browser;

  beforeAll(async () => {
    base = await stub.start();
    await new Promise<void>((resolve) => tracker.listen(0, '127.0.0.1', resolve));
    remote = `127.0.0.1:${(tracker.address() as AddressInfo).port}`;
    browser = await launchChromium(root);
    const app = boardApp({ hosts: [new URL(base).host] } as unknown as BoardContext, () => undefined);
    await browser.context.route(
      (url) => url.origin === base && url.pathname === '/',
      async (route) => {
        const res = await app.request('/', { headers: { host: new URL(base).host } });
        await route.fulfill({
          status: res.status,
          headers: Object.fromEntries(res.headers),
          body: Buffer.from(await res.arrayBuffer()),
        });
      },
    );
  }, 60_000);

  afterAll(async () => {
    await browser?.context.close();
    await stub.stop();
    tracker.closeAllConnections();
    await new Promise((resolve) => tracker.close(resolve));
    rmSync(root, { recursive: true, force: true });
  });

  it('the board app sends the policy with its page', async () => {
    const app = boardApp({ hosts: ['board.test'] } as unknown as BoardContext, () => undefined);
    const res = await app.request('/', { headers: { host: 'board.test' } });
    expect(res.headers.get('content-security-policy')).toBe(BOARD_CSP);
    expect(BOARD_CSP).toContain("script-src 'self'");
    expect(BOARD_CSP).toContain("img-src 'self' data:");
    // The shared event stream's SharedWorker (events-worker.js), from the board's own origin only.
    expect(BOARD_CSP).toContain("worker-src 'self'");
  });

  it('renders REPORT.md without loading its remote images; the page breaks no rule of its own', async () => {
    const { page } = browser;
    stub.status = { ...stub.status, phase: 'complete', pending: [] };
    stub.report = [
      '# Report',
      '',
      `![md](http://${remote}/markdown.png) and ![proto](//${remote}/protocol-relative.png)`,
      '',
      `<img src="https://${remote}/html.png" alt="html"> <img src="/\\${remote}/backslash.png" alt="bs">`,
      `<img src=" http://${remote}/space.png" alt="space"> <img src="local.png" alt="relative">`,
      `<img src="local.png" srcset="http://${remote}/srcset.png 2x" alt="srcset">`,
    ].join('\n');
    await page.goto(`${base}/?token=t#/saga/demo`);
    await page.locator('.report .markdown h1').waitFor();
    const imgs = await page
      .locator('.report .markdown img')
      .evaluateAll((els) =>
        els.map((e) => [e.getAttribute('alt'), e.getAttribute('src'), e.getAttribute('srcset')]),
      );
    expect(imgs).toEqual([
      ['md', null, null],
      ['proto', null, null],
      ['html', null, null],
      ['bs', null, null],
      ['space', null, null],
      ['relative', 'local.png', null],
      ['srcset', 'local.png', null],
    ]);
    expect(browser.pageErrors).toEqual([]);
    expect(hits).toEqual([]);
  });

  it('refuses what the sanitizer would miss: a remote image and an inline script put in the page', async () => {
    const { page } = browser;
    // A string: this project's tsconfig has no DOM lib.
    const violations = (await page.evaluate(`(async () => {
      const seen = [];
      document.addEventListener('securitypolicyviolation', (e) => seen.push(e.effectiveDirective));
      const img = document.createElement('img');
      img.src = 'http://${remote}/direct.png';
      document.body.append(img);
      const script = document.createElement('script');
      script.textContent = 'window.__inline = 1';
      document.body.append(script);
      const styled = document.createElement('div');
      styled.innerHTML = '<p style="background: url(http://${remote}/style.png)">x</p>';
      document.body.append(styled);
      for (let i = 0; i < 50 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
      return seen.sort();
    })()`)) as string[];
    expect(violations).toEqual(['img-src', 'script-src-elem', 'style-src-attr']);
    expect(await page.evaluate('window.__inline')).toBeUndefined();
    expect(hits).toEqual([]);
  });
});
