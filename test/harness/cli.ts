/** Runs bin/saga as a real process (the build must exist: `npm test` builds first). */
import { execFile } from 'node:child_process';
import path from 'node:path';

export const SAGA_BIN = path.resolve(__dirname, '..', '..', 'bin', 'saga');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runSaga(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SAGA_BIN, ...args], { env, timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
