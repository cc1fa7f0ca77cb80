/**
 * A confined agent that cannot reach its model API, in a real saga (real Temporal server, repo, bubblewrap
 * and network bridge): a scripted agent that, like a CLI with its endpoint in a file saga does not read,
 * keeps retrying a host the allow-list lacks. Its run is stopped within a minute (not at its 3-minute
 * timeout), the task is blocked after that one run, and the reason names the host it tried, the allow-list
 * and the `network:` line that fixes it. The same agent whose model API is allowed completes, though it
 * keeps looking up a host it may not reach (its telemetry) all run long: no false positive.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createFleetRepo, oneFilePlan, startApprovedSaga } from '../../../harness/fleet-saga';
import { AGENT_CLI_BIN } from '../../../harness/server';
import { createSagaTestEnv, waitForStatus, type SagaTestEnv } from '../../../harness/saga-env';

/** Retries its model API every second until it answers (as CLIs print "Reconnecting..."), then works. */
const AGENT = `
const fs = require('node:fs');
const http = require('node:http');
const get = (url) => new Promise((resolve, reject) => {
  const req = http.get(url, (res) => { let body = ''; res.on('data', (c) => (body += c)); res.on('end', () => resolve(body)); });
  req.on('error', reject);
  req.setTimeout(5000, () => req.destroy(new Error('timeout')));
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
  const side = process.env.SIDE_URL;
  const ticker = side ? setInterval(() => get(side).catch((e) => console.log('side: ' + e.code)), 3000) : null;
  for (;;) {
    try { console.log('model answered: ' + (await get(process.env.MODEL_ENDPOINT))); break; }
    catch (e) { console.log('Reconnecting... ' + (e.code || e.message)); await sleep(1000); }
  }
  await sleep(Number(process.env.WORK_MS || 0));
  fs.writeFileSync('work.txt', 'done\\n');
  if (ticker) clearInterval(ticker);
})();
`;

let env: SagaTestEnv;
let model: http.Server;
let modelPort: number;

const savedPath = process.env.PATH;

beforeAll(async () => {
  // The real Codex CLI on PATH, as a user has it.
  process.env.PATH = `${AGENT_CLI_BIN}${path.delimiter}${savedPath ?? ''}`;
  model = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  modelPort = (model.address() as AddressInfo).port;
  env = await createSagaTestEnv('network-unreachable');
  await env.startWorkers();
});
afterAll(async () => {
  await env?.close();
  process.env.PATH = savedPath;
  await new Promise<void>((resolve) => model?.close(() => resolve()));
});

jest.setTimeout(240_000);

/** A saga whose agent is the script (or `agent`'s profile), with `vars` in its environment and `network` allowed. */
async function startSaga(
  name: string,
  vars: Record<string, string>,
  network: string[],
  agent: { name: string; profile: Record<string, unknown> } | null = null,
) {
  const dir = env.tmp(name);
  const script = path.join(dir, 'agent.js');
  writeFileSync(script, AGENT);
  const profile = {
    ...(agent?.profile ?? { command: ['{node}', script] }),
    env: vars,
    network,
    timeout: '3m',
    idle_timeout: '2m',
  };
  const agentName = agent?.name ?? 'scripted';
  const { repo, planFile } = createFleetRepo(dir, {
    plan: oneFilePlan(name, 'test -f work.txt'),
    script: {},
    config: `agents:\n  ${agentName}: ${JSON.stringify(profile)}\n`,
  });
  await startApprovedSaga(env, { repo, planFile, name, args: 'Write work.txt', agent: agentName });
}

test('a model API the allow-list lacks: stopped within a minute, blocked, the host and the fix named', async () => {
  const started = Date.now();
  await startSaga('unreachable', { MODEL_ENDPOINT: `http://model-api.example:${modelPort}/` }, [
    'api.openai.com:443',
  ]);
  const status = await waitForStatus(
    env,
    'unreachable',
    (s) => s.phase === 'failed' || s.milestones[0]?.tasks[0]?.status === 'blocked',
    120_000,
  );
  const task = status.milestones[0]!.tasks[0]!;
  expect(Date.now() - started).toBeLessThan(60_000);
  expect({ status: task.status, attempts: task.attempts, delegations: task.delegations }).toEqual({
    status: 'blocked',
    attempts: 1,
    delegations: 1,
  });
  expect(task.reason).toMatch(
    /^agent scripted could not reach its model API from saga's sandbox: the sandbox refused model-api\.example \(\d+ times\)/,
  );
  expect(task.reason).toContain('allow-list: api.openai.com:443.');
  expect(task.reason).toContain(
    '`network: ["model-api.example:PORT"]` under agents.scripted in saga.config.yaml',
  );
  const transcript = readFileSync(path.join(status.sagaDir, 'runs', 'm1t1-d1-a1', 'transcript.log'), 'utf8');
  expect(transcript).toMatch(/Reconnecting\.\.\. ENOTFOUND/);
  expect(transcript).toContain('[saga sandbox] connection refused: model-api.example is not in');
});

test('a model API that answers: never stopped, though the agent keeps looking up a refused host', async () => {
  const vars = {
    MODEL_ENDPOINT: `http://127.0.0.1:${modelPort}/`,
    SIDE_URL: 'http://telemetry.example/',
    WORK_MS: '36000',
  };
  await startSaga('reachable', vars, [`127.0.0.1:${modelPort}`]);
  const status = await waitForStatus(
    env,
    'reachable',
    (s) => s.phase === 'failed' || s.pending.some((p) => p.kind === 'acceptance' || p.kind === 'escalation'),
    180_000,
  );
  const task = status.milestones[0]!.tasks[0]!;
  expect({ phase: status.phase, status: task.status, reason: task.reason }).toEqual({
    phase: 'acceptance',
    status: 'integrated',
    reason: null,
  });
  const transcript = readFileSync(path.join(status.sagaDir, 'runs', 'm1t1-d1-a1', 'transcript.log'), 'utf8');
  expect(transcript).toContain('model answered: ok');
  // The refused lookups were seen (so the run was judged, and let go) all through its 36 s of work.
  expect(transcript.match(/connection refused: telemetry\.example is not in/g)?.length ?? 0).toBeGreaterThan(
    5,
  );
});

test('an allowed model API that does not answer (nothing listens): stopped within a minute, the endpoint named', async () => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const started = Date.now();
  await startSaga('down', { MODEL_ENDPOINT: `http://127.0.0.1:${port}/` }, [`127.0.0.1:${port}`]);
  const status = await waitForStatus(
    env,
    'down',
    (s) => s.phase === 'failed' || s.milestones[0]?.tasks[0]?.status === 'blocked',
    120_000,
  );
  const task = status.milestones[0]!.tasks[0]!;
  expect(Date.now() - started).toBeLessThan(60_000);
  expect(task.reason).toBe(
    "agent scripted could not reach its model API from saga's sandbox: the allowed endpoint " +
      `127.0.0.1:${port} cannot be reached from this machine (ECONNREFUSED), and no connection was made. ` +
      `The sandbox's network allow-list: 127.0.0.1:${port}. Fix: make its allowed model API reachable from ` +
      'this machine; or allow the right one: `network: ["HOST:PORT"]` under agents.scripted in saga.config.yaml; ' +
      "run 'saga doctor --agent scripted'",
  );
});

test('the real Codex CLI whose provider in config.toml cannot be reached: stopped within a minute', async () => {
  const home = env.tmp('codex-home');
  const codexHome = path.join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  // A provider whose host does not resolve (a VPN that is down, a typo): allowed, since config.toml names it.
  writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      'model = "gpt-5.5"',
      'model_provider = "gone"',
      'check_for_update_on_startup = false',
      '[analytics]',
      'enabled = false',
      '[model_providers.gone]',
      'name = "Gone"',
      `base_url = "http://llm.saga-test.invalid:${modelPort}/v1"`,
      'wire_api = "responses"',
      'env_key = "OPENAI_API_KEY"',
    ].join('\n'),
  );
  const vars = { HOME: home, CODEX_HOME: codexHome, OPENAI_API_KEY: 'sk-test' };
  const started = Date.now();
  await startSaga('codex-gone', vars, [], { name: 'codex', profile: { model: 'gpt-5.5' } });
  const status = await waitForStatus(
    env,
    'codex-gone',
    (s) => s.phase === 'failed' || s.milestones[0]?.tasks[0]?.status === 'blocked',
    150_000,
  );
  const task = status.milestones[0]!.tasks[0]!;
  expect(Date.now() - started).toBeLessThan(75_000);
  expect(task.reason).toMatch(
    new RegExp(
      `^agent codex could not reach its model API from saga's sandbox: (the allowed endpoint [^;]+; )*` +
        `the allowed endpoint llm\\.saga-test\\.invalid:${modelPort} cannot be reached from this machine \\(ENOTFOUND\\)`,
    ),
  );
  expect(task.reason).toContain(
    `allow-list: api.openai.com:443, chatgpt.com:443, llm.saga-test.invalid:${modelPort}.`,
  );
});
