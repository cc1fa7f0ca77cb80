/**
 * Runs bin/saga in a pseudo-terminal (python3's pty module), for the paths that only a terminal takes.
 * The test answers prompts: `answer` sees the output so far and returns what to type, or null to wait.
 */
import { spawn } from 'node:child_process';
import { SAGA_BIN, type CliResult } from './cli';

// Relays the pty's output to stdout and our stdin to the pty; exits with the child's exit code.
const PTY_DRIVER = `
import os, pty, select, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
inputs = [fd, 0]
while True:
    ready, _, _ = select.select(inputs, [], [])
    if fd in ready:
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b''
        if not data:
            break
        os.write(1, data)
    if 0 in ready:
        data = os.read(0, 4096)
        if data:
            os.write(fd, data)
        else:
            inputs.remove(0)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
`;

export function runSagaInPty(
  args: string[],
  env: NodeJS.ProcessEnv,
  answer: (output: string) => string | null,
  timeoutMs = 60_000,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', PTY_DRIVER, process.execPath, SAGA_BIN, ...args], { env });
    let stdout = '';
    let stderr = '';
    let answeredAt = 0;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`saga ${args.join(' ')} in a pty timed out; output so far:\n${stdout}`));
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      // Each prompt is answered once: only output that came after the last answer is looked at.
      const typed = answer(stdout.slice(answeredAt));
      if (typed !== null) {
        answeredAt = stdout.length;
        child.stdin.write(typed);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}
