import { exitStatus, processEndWhy, READ_ONLY_HINT } from '../../../../src/domain/text/process-end';
import { stderrLines, STDERR_CHARS } from '../../../../src/domain/text/stderr-lines';

describe('how a process ended, in words', () => {
  test('exit status, signal, timeout and hang', () => {
    expect(exitStatus({ exitCode: 1 })).toBe('exit status 1');
    expect(exitStatus({ exitCode: null, signal: 'SIGKILL' })).toBe('killed by SIGKILL');
    expect(exitStatus({ exitCode: null, timedOut: true })).toBe('timed out');
    expect(exitStatus({ exitCode: null, idle: true })).toBe('hung (printed nothing for too long)');
  });

  test("stderr's last lines, controls stripped, capped, with the sandbox's write rule for EROFS", () => {
    const stderr = stderrLines(
      'noise\n\u001b[31mError: Cannot find module ./lib.js\u001b[0m\n\n  at x\n  at y\n  at z\n  at w\n',
    );
    expect(stderr).toBe('Error: Cannot find module ./lib.js | at x | at y | at z | at w');
    expect(stderrLines('x'.repeat(1000))).toHaveLength(STDERR_CHARS);
    expect(processEndWhy({ exitCode: 1, stderrTail: stderr })).toBe(`exit status 1; stderr: ${stderr}`);
    expect(processEndWhy({ exitCode: 2, stderrTail: null })).toBe('exit status 2');
    expect(processEndWhy({ exitCode: 1, stderrTail: "EROFS: read-only file system, open '/r/a.log'" })).toBe(
      `exit status 1; stderr: EROFS: read-only file system, open '/r/a.log' (${READ_ONLY_HINT})`,
    );
  });
});
