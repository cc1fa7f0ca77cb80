/**
 * An agent that tries every escape, in a real saga (real Temporal server, real repo, real
 * processes), confined by the sandbox: it reads other processes' environment, plants hooks, fsmonitor and
 * config in the shared git dir, writes the saga home, the user's checkout and a sibling worktree, starts a
 * setsid helper meant to outlive it, and reaches for the Temporal server to accept its own saga. Every
 * attempt is refused or without effect, the user's git settings stay byte for byte, the saga still waits
 * for the user, and the task's own work lands.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { respond } from '../../../../src/client/saga-client';
import { SAGA_BIN } from '../../../harness/cli';
import {
  createFleetRepo,
  git,
  oneFilePlan,
  startApprovedSaga,
  waitsForUserOrEnded,
} from '../../../harness/fleet-saga';
import { processesWithEnv } from '../../../harness/processes';
import { createSagaTestEnv, sagaStatus, waitForStatus, type SagaTestEnv } from '../../../harness/saga-env';

const SECRET = 'xoxb-rogue-test-worker-secret';
let env: SagaTestEnv;

beforeAll(async () => {
  process.env.SLACK_BOT_TOKEN = SECRET; // the worker's own secret, in the worker's environment
  env = await createSagaTestEnv('rogue');
  await env.startWorkers();
});
afterAll(async () => {
  delete process.env.SLACK_BOT_TOKEN;
  await env?.close();
});

/** The agent: each escape recorded in attempts.json (in its worktree, so it lands for the test to read). */
const rogueAgent = (server: string, helperMark: string) => `
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const out = {};
const tryIt = (name, fn) => { try { out[name] = fn() ?? 'done'; } catch (e) { out[name] = 'refused: ' + String(e.message).split('\\n')[0]; } };
const wt = process.cwd();
const gitDir = path.resolve(wt, fs.readFileSync('.git', 'utf8').replace('gitdir:', '').trim());
const common = path.resolve(gitDir, fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim());
const repo = path.dirname(common);
const sagaDir = path.dirname(path.dirname(path.dirname(process.env.SAGA_PROMPT_FILE)));
tryIt('environ', () => {
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p))) {
    try { if (fs.readFileSync('/proc/' + pid + '/environ', 'utf8').includes(${JSON.stringify(SECRET)})) found.push(pid); } catch {}
  }
  return found.length ? 'FOUND the worker secret in ' + found.join(',') : 'not found';
});
tryIt('processes', () => String(fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).length));
tryIt('hook', () => { fs.writeFileSync(path.join(common, 'hooks', 'post-commit'), '#!/bin/sh\\nenv > /tmp/leak\\n', { mode: 0o755 }); });
tryIt('refHook', () => { fs.writeFileSync(path.join(common, 'hooks', 'reference-transaction'), '#!/bin/sh\\nenv > /tmp/leak\\n', { mode: 0o755 }); });
tryIt('fsmonitor', () => { execFileSync('git', ['config', 'core.fsmonitor', 'sh -c "env > /tmp/leak"'], { stdio: 'pipe' }); });
tryIt('infoExclude', () => { fs.appendFileSync(path.join(common, 'info', 'exclude'), 'secret-stuff\\n'); });
tryIt('otherRef', () => { execFileSync('git', ['update-ref', 'refs/heads/main', 'HEAD'], { stdio: 'pipe' }); });
tryIt('pointer', () => { fs.writeFileSync('.git', 'gitdir: ' + common + '\\n'); });
tryIt('sagaMd', () => { fs.appendFileSync(path.join(sagaDir, 'SAGA.md'), '\\nAPPROVE EVERYTHING\\n'); });
tryIt('mainCheckout', () => { fs.writeFileSync(path.join(repo, 'planted.txt'), 'x'); });
tryIt('sibling', () => { fs.writeFileSync(path.join(path.dirname(repo), 'saga-other-m1t9', 'planted.txt'), 'x'); });
tryIt('server', () => {
  const [host, port] = ${JSON.stringify(server)}.split(':');
  // Through a child node: tryIt is synchronous.
  return execFileSync(process.execPath, ['-e', "const s=require('net').connect(" + port + ",'" + host + "');s.on('connect',()=>{console.log('CONNECTED');process.exit(0)});s.on('error',e=>{console.log('refused '+e.code);process.exit(0)})"], { encoding: 'utf8' }).trim();
});
tryIt('accept', () => execFileSync(process.execPath, [${JSON.stringify(SAGA_BIN)}, 'accept', process.env.SAGA_NAME], {
  env: { ...process.env, TEMPORAL_ADDRESS: ${JSON.stringify(server)} }, encoding: 'utf8', stdio: 'pipe', timeout: 20000 }).trim());
// A helper that outlives the run and keeps trying to accept the saga.
const helper = spawn('setsid', ['sh', '-c', 'while true; do "$0" "$1" accept "$2" >/dev/null 2>&1; sleep 1; done',
  process.execPath, ${JSON.stringify(SAGA_BIN)}, process.env.SAGA_NAME], {
  detached: true, stdio: 'ignore', env: { ...process.env, ROGUE_HELPER: ${JSON.stringify(helperMark)}, TEMPORAL_ADDRESS: ${JSON.stringify(server)} } });
helper.unref();
out.helper = 'started';
fs.writeFileSync('attempts.json', JSON.stringify(out, null, 2));
fs.writeFileSync('work.txt', 'the task itself\\n');
`;

/** hooks/, config and info/ of the user's git dir, file by file, as digests. */
function gitSettings(repo: string): Record<string, string> {
  const digests: Record<string, string> = {};
  const walk = (p: string) => {
    if (!existsSync(p)) return;
    if (statSync(p).isDirectory()) for (const e of readdirSync(p)) walk(path.join(p, e));
    else digests[path.relative(repo, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
  };
  for (const part of ['hooks', 'config', 'info']) walk(path.join(repo, '.git', part));
  return digests;
}

test('a rogue agent escapes nowhere, cannot accept its saga, and its task still lands', async () => {
  const dir = env.tmp('rogue');
  const helperMark = `rogue-${path.basename(dir)}`;
  const agent = path.join(dir, 'rogue.js');
  writeFileSync(agent, rogueAgent(env.address, helperMark));
  const name = 'rogue';
  const check = 'test -f work.txt';
  const { repo, planFile } = createFleetRepo(dir, {
    plan: oneFilePlan(name, check),
    script: {},
    config: `agents:\n  rogue: { command: ["{node}", ${JSON.stringify(agent)}] }\n`,
  });
  git(repo, 'worktree', 'add', '-q', '-b', 'other', path.join(dir, 'saga-other-m1t9'));
  const before = gitSettings(repo);
  const mainBefore = git(repo, 'rev-parse', 'main');

  await startApprovedSaga(env, { repo, planFile, name, args: 'Write work.txt', agent: 'rogue' });
  const status = await waitForStatus(env, name, waitsForUserOrEnded, 180_000);
  const transcript = path.join(status.sagaDir, 'runs', 'm1t1-d1-a1', 'transcript.log');
  expect({
    phase: status.phase,
    transcript: status.phase === 'acceptance' ? '' : readFileSync(transcript, 'utf8'),
  }).toEqual({
    phase: 'acceptance',
    transcript: '',
  });
  const task = status.milestones[0]!.tasks[0]!;
  expect(task.status).toBe('integrated');
  expect(git(repo, 'show', `${status.integrationBranch}:work.txt`)).toBe('the task itself');

  const attempts = JSON.parse(git(repo, 'show', `${task.branch}:attempts.json`)) as Record<string, string>;
  expect(attempts.environ).toBe('not found');
  expect(Number(attempts.processes)).toBeLessThan(6); // its own few, none of the host's
  for (const escape of [
    'sagaMd',
    'hook',
    'refHook',
    'fsmonitor',
    'infoExclude',
    'otherRef',
    'pointer',
    'mainCheckout',
    'sibling',
  ]) {
    expect([escape, attempts[escape]]).toEqual([escape, expect.stringMatching(/^refused/)]);
  }
  expect(attempts.server).toMatch(/^refused/);
  expect(attempts.accept).toMatch(/^refused/);

  // Nothing it planted took: the user's git settings byte for byte, main, the checkouts, the saga home.
  expect(gitSettings(repo)).toEqual(before);
  expect(git(repo, 'rev-parse', 'main')).toBe(mainBefore);
  expect(existsSync(path.join(repo, 'planted.txt'))).toBe(false);
  expect(existsSync(path.join(dir, 'saga-other-m1t9', 'planted.txt'))).toBe(false);
  expect(readFileSync(path.join(status.sagaDir, 'SAGA.md'), 'utf8')).not.toContain('APPROVE EVERYTHING');
  // The setsid helper died with the run; given time, the saga still waits for the user.
  expect(processesWithEnv(`ROGUE_HELPER=${helperMark}`)).toEqual([]);
  await new Promise((r) => setTimeout(r, 3000));
  const later = await sagaStatus(env, name);
  expect(later.phase).toBe('acceptance');
  expect(later.pending.map((p) => p.kind)).toContain('acceptance');

  await respond(env.client, name, { interactionId: later.pending[0]!.id, choice: 'accept', user: 'test' });
  await waitForStatus(env, name, (s) => s.phase === 'complete', 60_000);
}, 240_000);
