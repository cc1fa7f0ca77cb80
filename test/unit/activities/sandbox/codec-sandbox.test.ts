/**
 * The codec's key stays the worker's: never in an agent's or a check's environment, and the key
 * file SAGA_CODEC_KEY_FILE names is absent inside the sandbox (real bubblewrap), even to a process that
 * knows its path.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runConfined } from '../../../../src/activities/sandbox';
import { commandEnvironment } from '../../../../src/domain/config/agent-env';
import { PROJECT_ROOT } from '../../../../src/project-root';

// Outside /tmp: the sandbox's /tmp is a fresh one anyway, so a key there would prove nothing.
const ARTIFACTS = path.resolve(PROJECT_ROOT, '.test-artifacts');
const KEY = randomBytes(32).toString('hex');
let dir: string;
let keyFile: string;
const saved = { ...process.env };

beforeAll(() => {
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = mkdtempSync(path.join(ARTIFACTS, 'codec-sandbox-'));
  keyFile = path.join(dir, 'codec.key');
  writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
  Object.assign(process.env, { SAGA_CODEC_KEY_FILE: keyFile, SAGA_CODEC_OLD_KEYS: `old:${KEY}` });
});
afterAll(() => {
  for (const name of ['SAGA_CODEC_KEY_FILE', 'SAGA_CODEC_OLD_KEYS']) delete process.env[name];
  Object.assign(process.env, saved);
  rmSync(dir, { recursive: true, force: true });
});

test("the codec settings are not in a check's environment, even when pass_env names them", () => {
  const env = commandEnvironment(process.env, {}, ['SAGA_CODEC_KEY_FILE', 'SAGA_CODEC_OLD_KEYS', 'SAGA_*']);
  expect(Object.keys(env).filter((name) => name.startsWith('SAGA_CODEC'))).toEqual([]);
});

test('the key file is absent inside the sandbox, though the process names its path', async () => {
  const outputPath = path.join(dir, 'out.log');
  const cwd = mkdtempSync(path.join(dir, 'work-'));
  const run = await runConfined(
    { mode: 'auto' },
    {
      argv: ['/bin/sh', '-c', `cat "${keyFile}" 2>&1; echo "[end]"`],
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir() },
      outputPath,
      timeoutMs: 30_000,
    },
  );
  const output = readFileSync(outputPath, 'utf8');
  expect(run).toMatchObject({ exitCode: 0 });
  expect(output).toContain('[end]');
  expect(output).not.toContain(KEY);
  // Outside the sandbox the file is as written: the test reads what a confined process may not.
  expect(readFileSync(keyFile, 'utf8')).toContain(KEY);
});
