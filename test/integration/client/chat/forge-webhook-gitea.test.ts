/**
 * The REAL Gitea (test/harness/gitea.ts) delivering its webhooks to `POST /webhooks/forge` of a real
 * `bin/saga chat serve` process (configured only by SAGA_FORGE_WEBHOOK_SECRET, as a user would run it):
 * a hook on alice/demo with the secret, a push of `saga/<name>/deliver-m1`, a failing commit status as a CI
 * system would set it, a pull request and bob's review comment; the stand-in saga under `saga-<name>` on the real Temporal server
 * records the `forgeEvent` signals Gitea's deliveries caused. A second hook signed with another secret is
 * refused (401) and signals nothing.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { SAGA_BIN } from '../../../harness/cli';
import { testServer } from '../../../harness/server';
import { startGitea, type TestGitea } from '../../../harness/gitea';
import { startRecorderEnv, type RecorderEnv } from '../../../harness/forge-webhook-env';
import { freePort, waitFor } from '../../../harness/wait';

const SECRET = 'gitea-hook-secret';
const SAGA = `giteahook-${process.pid}`;
const HEAD = `saga/${SAGA}/deliver-m1`;
const root = mkdtempSync(path.join(os.tmpdir(), 'saga-forge-hook-'));
const clone = path.join(root, 'clone');
let gitea: TestGitea;
let env: RecorderEnv;
let bridge: ChildProcess;
let bridgeUrl: string;
/** The bridge's output lines (one per request: `POST /webhooks/forge → <status>`). */
const logs: string[] = [];

/** `bin/saga chat serve` with nothing but the forge secret, on a free port, against the run's Temporal. */
async function startBridge(): Promise<void> {
  const port = await freePort();
  const server = testServer();
  bridge = spawn(process.execPath, [SAGA_BIN, 'chat', 'serve'], {
    env: {
      PATH: process.env.PATH,
      HOME: path.join(root, 'home'),
      SAGA_HOME: path.join(root, 'saga-home'),
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      SAGA_FORGE_WEBHOOK_SECRET: SECRET,
      SAGA_CHAT_PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let pending = '';
  bridge.stdout!.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    logs.push(...lines);
  });
  bridge.stderr!.on('data', (chunk: Buffer) => logs.push(`stderr: ${chunk.toString('utf8')}`));
  await waitFor(
    'the bridge to listen',
    () => logs.some((l) => l.startsWith('Chat bridge listening')),
    30_000,
  );
  bridgeUrl = `http://127.0.0.1:${port}`;
}

function git(args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd: clone,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: path.join(root, 'home'),
      GIT_CONFIG_NOSYSTEM: '1',
      ...gitea.gitEnv('alice'),
    },
  }).trim();
}

const HookSchema = z.object({ id: z.number() });

async function createHook(secret: string): Promise<number> {
  const created = await gitea.api('alice', 'POST', '/repos/alice/demo/hooks', {
    type: 'gitea',
    active: true,
    events: ['push', 'status', 'pull_request', 'pull_request_review'],
    config: { url: `${bridgeUrl}/webhooks/forge`, content_type: 'json', secret },
  });
  return HookSchema.parse(created).id;
}

beforeAll(async () => {
  gitea = await startGitea();
  env = await startRecorderEnv('giteahook');
  await env.startSaga(SAGA);
  await startBridge();
  execFileSync('git', ['clone', '-q', gitea.repo.cloneUrl, clone], {
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), ...gitea.gitEnv('alice') },
  });
}, 120_000);

afterAll(async () => {
  if (bridge && bridge.exitCode === null) {
    const exited = new Promise((resolve) => bridge.once('exit', resolve));
    bridge.kill('SIGTERM');
    await exited;
  }
  await env?.close();
  await gitea?.stop();
  rmSync(root, { recursive: true, force: true });
});

test('Gitea delivers push, commit status and pull request webhooks; the saga gets forgeEvent signals', async () => {
  await createHook(SECRET);
  await createHook('not-the-bridge-secret');

  git(['checkout', '-q', '-b', HEAD]);
  writeFileSync(path.join(clone, 'a.txt'), 'milestone 1\n');
  git(['add', 'a.txt']);
  git(['commit', '-q', '-m', 'm1']);
  const sha = git(['rev-parse', 'HEAD']);
  git(['push', '-q', 'origin', HEAD]);
  // The push tells the bridge whose commit it is: Gitea's status events name only the commit.
  await waitFor('the push delivery', () => logs.some((l) => l.includes('/webhooks/forge → 202')), 30_000);

  const started = Date.now();
  await gitea.setStatus(sha, 'failure', 'ci/test', 'tests failed');
  const ci = await waitFor(
    'the ci signal',
    async () => (await env.events(SAGA)).find((e) => e.kind === 'ci'),
    30_000,
  );
  expect(ci).toEqual({ kind: 'ci', head: HEAD, sha });
  expect(Date.now() - started).toBeLessThan(10_000);

  const pr = z
    .object({ number: z.number() })
    .parse(
      await gitea.api('alice', 'POST', '/repos/alice/demo/pulls', { head: HEAD, base: 'main', title: 'M1' }),
    );
  const opened = await waitFor(
    'the pull request signal',
    async () => (await env.events(SAGA)).find((e) => e.kind === 'pull-request'),
    30_000,
  );
  expect(opened).toEqual({ kind: 'pull-request', head: HEAD, sha });

  // bob's line comment in a review: Gitea's pull_request_review_comment.
  await gitea.reviewComment('bob', { pr: pr.number, path: 'a.txt', line: 1, body: 'Say which milestone.' });
  const reviewed = await waitFor(
    'the review signal',
    async () => (await env.events(SAGA)).find((e) => e.kind === 'review'),
    30_000,
  );
  expect(reviewed).toEqual({ kind: 'review', head: HEAD, sha });

  // The other hook's deliveries (another secret): push, status, pull request and review, each refused.
  const count = (status: number) => logs.filter((l) => l === `POST /webhooks/forge → ${status}`).length;
  await waitFor('the forged hook deliveries refused', () => count(401) >= 4, 30_000);
  expect(count(200)).toBe(3);
  const events = await env.events(SAGA);
  expect(events.filter((e) => e.kind === 'ci')).toHaveLength(1);
});
