/** `bin/saga board` as a user runs it: a child process on the test server; its URL read from what it prints. */
import { spawn, type ChildProcess } from 'node:child_process';
import { SAGA_BIN } from './cli';

export interface BoardProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** SIGINT, as Ctrl-C; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export async function startBoardProcess(env: NodeJS.ProcessEnv, args: string[] = []): Promise<BoardProcess> {
  const child = spawn(process.execPath, [SAGA_BIN, 'board', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /Saga board: (http:\/\/\S+?)\/?\n/.exec(out);
      if (found) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`bin/saga board exited ${code}: ${out}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    child,
    url,
    output: () => out,
    stop: () => {
      if (child.exitCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}
