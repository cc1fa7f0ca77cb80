/**
 * Git runs through a small helper process (forking the large worker is slow). It must behave like running
 * the command directly: argument arrays, the request's own environment and folder, exit codes and output
 * passed through, a missing program reported; and a helper that dies fails what it had not answered (the
 * activity's retry decides afresh) and is replaced for the next command.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commandHelperPid, runCommand } from '../../../../src/activities/process/command-helper';

const dir = mkdtempSync(path.join(os.tmpdir(), 'saga-helper-'));
const options = {
  cwd: dir,
  env: { ...process.env, SAGA_HELPER_TEST: 'from the request' },
  maxBuffer: 1 << 20,
};

describe('command helper', () => {
  test('arguments stay arguments; folder, environment, exit code and output pass through', async () => {
    const out = await runCommand(
      '/bin/sh',
      ['-c', 'pwd; echo "$SAGA_HELPER_TEST"; echo "$0" >&2; exit 3', 'a; rm -rf /'],
      options,
    );
    expect(out).toEqual({ code: 3, stdout: `${dir}\nfrom the request\n`, stderr: 'a; rm -rf /\n' });
    expect(commandHelperPid()).not.toBeNull();
    expect(commandHelperPid()).not.toBe(process.pid);
  });

  test('a program that does not exist is a failure with no exit code', async () => {
    const out = await runCommand('saga-no-such-program', [], options);
    expect(out.code).toBeNull();
    expect(out.failure).toMatch(/ENOENT/);
  });

  test('many at once each get their own answer', async () => {
    const outs = await Promise.all(
      Array.from({ length: 30 }, (_, i) => runCommand('/bin/sh', ['-c', `echo ${i}`], options)),
    );
    expect(outs.map((o) => o.stdout.trim())).toEqual(Array.from({ length: 30 }, (_, i) => String(i)));
  });

  test('a helper killed mid-command fails that command, and the next one gets a new helper', async () => {
    const first = commandHelperPid()!;
    const slow = runCommand('/bin/sh', ['-c', 'sleep 5; echo too late'], options);
    await new Promise((r) => setTimeout(r, 200));
    process.kill(first, 'SIGKILL');
    expect(await slow).toMatchObject({ code: null, failure: 'the command helper process exited' });
    const next = await runCommand('/bin/sh', ['-c', 'echo again'], options);
    expect(next).toMatchObject({ code: 0, stdout: 'again\n' });
    expect(commandHelperPid()).not.toBe(first);
  });
});
