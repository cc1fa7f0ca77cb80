/**
 * Errors of the Gitea adapter and the push name the call, the HTTP status and the forge's message, and
 * never the token: against a real local HTTP server that echoes what it was sent (no fetch mock).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ForgeCallError, isRetryableForgeError } from '../../../../src/activities/forge/forge-error';
import { giteaForge } from '../../../../src/activities/forge/gitea';
import { checkRemoteUrl, pushBranch, pushEnv } from '../../../../src/activities/forge/push';
import type { ForgeTarget } from '../../../../src/activities/forge/port';

const TOKEN = 'tok_0123456789abcdef_secret';
let server: http.Server;
let seen: http.IncomingHttpHeaders[] = [];
let url: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.headers);
    if (req.url?.includes('/slow')) return; // never answers: the timeout must end the call
    const status = req.url?.endsWith('/pulls/404') ? 404 : req.url?.includes('/merge') ? 405 : 500;
    res.writeHead(status, { 'content-type': 'application/json' });
    // A careless forge echoing the credentials it got.
    res.end(JSON.stringify({ message: `no such thing (you sent ${req.headers.authorization ?? ''})` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
});

const target = (repo = 'r'): ForgeTarget => ({ kind: 'gitea', url, owner: 'o', repo, tokenEnv: 'T_GITEA' });

describe('Gitea adapter errors', () => {
  it('name the call, the status and the message, with the token scrubbed; the token went in the header only', async () => {
    const forge = giteaForge(target(), { T_GITEA: TOKEN });
    const error = (await forge.updatePullRequest(404, { body: 'x' }).catch((e: Error) => e)) as Error;
    expect(error.message).toContain("'update pull request' (PATCH /repos/o/r/pulls/404)");
    expect(error.message).toContain('HTTP 404');
    expect(error.message).toContain('no such thing');
    expect(error.message).not.toContain(TOKEN);
    expect(seen[0]?.authorization).toBe(`token ${TOKEN}`);
  });

  it('a merge Gitea refuses is merged: false with its reason, without the token', async () => {
    const forge = giteaForge(target(), { T_GITEA: TOKEN });
    const result = await forge.merge(1, 'merge', 'abc');
    expect(result.merged).toBe(false);
    expect(result.message).toContain('HTTP 405');
    expect(result.message).not.toContain(TOKEN);
  });

  it('a missing token names the variable; a call that hangs times out', async () => {
    await expect(giteaForge(target(), {}).whoAmI()).rejects.toThrow(/T_GITEA \(forge.token_env\)/);
    const forge = giteaForge(target('slow'), { T_GITEA: TOKEN }, { timeoutMs: 300 });
    const timedOut = await forge.findPullRequest('x').catch((e: unknown) => e);
    expect((timedOut as Error).message).toMatch(/no answer: timed out after 300 ms/);
    expect(isRetryableForgeError(timedOut)).toBe(true);
  });

  it('only a missing answer, a server error or a rate limit is worth retrying', () => {
    expect(isRetryableForgeError(new ForgeCallError('get', 502, 'x'))).toBe(true);
    expect(isRetryableForgeError(new ForgeCallError('get', 429, 'x'))).toBe(true);
    expect(isRetryableForgeError(new ForgeCallError('get', 403, 'x'))).toBe(false);
    expect(isRetryableForgeError(new ForgeCallError('token', null, 'x'))).toBe(false);
    expect(isRetryableForgeError(new Error('x'))).toBe(false);
  });
});

describe('push', () => {
  it('refuses a remote URL that carries credentials, without repeating them', async () => {
    expect(() => checkRemoteUrl(`https://bob:${TOKEN}@gitea.test/o/r.git`)).toThrow(/carries credentials/);
    const error = (await pushBranch({
      repoDir: '/nonexistent',
      remoteUrl: `https://${TOKEN}@gitea.test/o/r.git`,
      branch: 'main',
      tokenEnv: 'T',
      env: { T: TOKEN },
    }).catch((e: Error) => e)) as Error;
    expect(error.message).toMatch(/carries credentials/);
    expect(error.message).not.toContain(TOKEN);
    expect(() => checkRemoteUrl('ssh://git@gitea.test/o/r.git')).toThrow();
    expect(() => checkRemoteUrl('/some/path')).toThrow(/not a URL/);
  });

  it('gives git the token only in its environment, the helper text being a constant', () => {
    const env = pushEnv(TOKEN);
    expect(env.GIT_CONFIG_COUNT).toBe('2');
    expect(env.GIT_CONFIG_VALUE_0).toBe('');
    expect(env.GIT_CONFIG_VALUE_1).not.toContain(TOKEN);
    expect(env.GIT_CONFIG_VALUE_1).toContain('$SAGA_FORGE_TOKEN');
    expect(env.SAGA_FORGE_TOKEN).toBe(TOKEN);
  });
});

describe('the push’s credential helper, run by real git', () => {
  it('answers git with the token and lets no helper of the user’s (store) keep it', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'saga-push-helper-'));
    const stored = path.join(home, 'stored-credentials');
    try {
      writeFileSync(path.join(home, '.gitconfig'), `[credential]\n\thelper = store --file ${stored}\n`);
      const run = (action: string, input: string) =>
        execFileSync('git', ['credential', action], {
          input,
          encoding: 'utf8',
          env: { PATH: process.env.PATH, HOME: home, GIT_TERMINAL_PROMPT: '0', ...pushEnv(TOKEN) },
        });
      const filled = run('fill', 'protocol=https\nhost=gitea.test\npath=o/r.git\n\n');
      expect(filled).toContain(`password=${TOKEN}`);
      run('approve', filled);
      expect(existsSync(stored)).toBe(false);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
