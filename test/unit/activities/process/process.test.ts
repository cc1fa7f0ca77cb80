import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProcess, type ProcessProgress } from '../../../../src/activities/process/process';
import { isRunning } from '../../../harness/processes';

/** A shell that starts a grandchild `sleep`, prints both pids, then waits forever. */
const TREE_SCRIPT = 'sleep 60 & echo "child=$$ grandchild=$!"; wait';

function pidsFrom(text: string): number[] {
  const m = /child=(\d+) grandchild=(\d+)/.exec(text);
  if (!m) throw new Error(`no pids in output: ${text}`);
  return [Number(m[1]), Number(m[2])];
}

describe('runProcess', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-process-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('captures exit code, output file, last line and tail; a non-zero exit does not throw', async () => {
    const outputPath = path.join(dir, 'nested', 'out.log');
    const result = await runProcess({
      argv: ['/bin/sh', '-c', 'echo "to stderr" >&2; sleep 0.2; echo first; echo last; exit 3'],
      cwd: dir,
      outputPath,
    });
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, idle: false, aborted: false });
    expect(result.lastLine).toBe('last');
    const text = await fs.readFile(outputPath, 'utf8');
    expect(text).toContain('first\n');
    expect(text).toContain('to stderr\n');
    expect(result.outputBytes).toBe(Buffer.byteLength(text));
    expect(result.tail).toBe(text);
  });

  test('a stdin file that is slow to open: the output file opening meanwhile is not missed', async () => {
    // A FIFO's open waits for its writer: the output stream opens first, as it did under load (the run then
    // hung before any timeout was armed).
    const fifo = path.join(dir, 'prompt.fifo');
    execFileSync('mkfifo', [fifo]);
    const run = runProcess({
      argv: ['/bin/cat'],
      cwd: dir,
      outputPath: path.join(dir, 'out.log'),
      stdinPath: fifo,
      timeoutMs: 20_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const writer = await fs.open(fifo, 'w');
    await writer.writeFile('the prompt\n');
    await writer.close();
    const result = await run;
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, lastLine: 'the prompt' });
  }, 30_000);

  test('passes arguments as separate argv elements, never through a shell', async () => {
    const hostile = '$(touch pwned); `touch pwned2` && echo hi';
    const result = await runProcess({
      argv: [process.execPath, '-e', 'console.log(process.argv[1])', hostile],
      cwd: dir,
      outputPath: path.join(dir, 'out.log'),
    });
    expect(result.lastLine).toBe(hostile);
    await expect(fs.readdir(dir)).resolves.toEqual(['out.log']);
  });

  test('appends to an existing output file', async () => {
    const outputPath = path.join(dir, 'out.log');
    await fs.writeFile(outputPath, 'earlier\n');
    await runProcess({ argv: ['/bin/sh', '-c', 'echo later'], cwd: dir, outputPath });
    expect(await fs.readFile(outputPath, 'utf8')).toBe('earlier\nlater\n');
  });

  test('total timeout kills the whole process group, grandchildren included', async () => {
    const outputPath = path.join(dir, 'out.log');
    const result = await runProcess({
      argv: ['/bin/sh', '-c', TREE_SCRIPT],
      cwd: dir,
      outputPath,
      timeoutMs: 500,
      killGraceMs: 1000,
    });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBe('SIGTERM');
    const [child, grandchild] = pidsFrom(await fs.readFile(outputPath, 'utf8'));
    expect(isRunning(child)).toBe(false);
    expect(isRunning(grandchild)).toBe(false);
  });

  test('a child that ignores SIGTERM is killed with SIGKILL after the grace period', async () => {
    const result = await runProcess({
      argv: ['/bin/sh', '-c', 'trap "" TERM; echo started; while true; do sleep 0.1; done'],
      cwd: dir,
      outputPath: path.join(dir, 'out.log'),
      timeoutMs: 300,
      killGraceMs: 500,
    });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe('SIGKILL');
    expect(result.durationMs).toBeGreaterThanOrEqual(750);
  });

  test('idle timeout: no output for too long counts as hung and kills the tree', async () => {
    const outputPath = path.join(dir, 'out.log');
    const started = Date.now();
    const result = await runProcess({
      argv: ['/bin/sh', '-c', `echo working; ${TREE_SCRIPT}`],
      cwd: dir,
      outputPath,
      timeoutMs: 30_000,
      idleTimeoutMs: 400,
    });
    expect(result).toMatchObject({ idle: true, timedOut: false, aborted: false, exitCode: null });
    expect(Date.now() - started).toBeLessThan(5000);
    for (const pid of pidsFrom(await fs.readFile(outputPath, 'utf8'))) expect(isRunning(pid)).toBe(false);
  });

  test('steady output keeps an idle timeout from firing', async () => {
    const result = await runProcess({
      argv: ['/bin/sh', '-c', 'for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.1; done'],
      cwd: dir,
      outputPath: path.join(dir, 'out.log'),
      idleTimeoutMs: 400,
    });
    expect(result).toMatchObject({ idle: false, exitCode: 0, lastLine: 'tick 6' });
  });

  test('abort signal kills the tree and reports aborted', async () => {
    const outputPath = path.join(dir, 'out.log');
    const controller = new AbortController();
    const run = runProcess({
      argv: ['/bin/sh', '-c', TREE_SCRIPT],
      cwd: dir,
      outputPath,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 300);
    const result = await run;
    expect(result).toMatchObject({ aborted: true, timedOut: false, idle: false, exitCode: null });
    for (const pid of pidsFrom(await fs.readFile(outputPath, 'utf8'))) expect(isRunning(pid)).toBe(false);
  });

  test('an already aborted signal spawns nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runProcess({
      argv: ['/bin/sh', '-c', 'touch spawned'],
      cwd: dir,
      outputPath: path.join(dir, 'out.log'),
      signal: controller.signal,
    });
    expect(result.aborted).toBe(true);
    await expect(fs.stat(path.join(dir, 'spawned'))).rejects.toThrow();
  });

  test('background processes left behind by a finished command are ended', async () => {
    const outputPath = path.join(dir, 'out.log');
    const result = await runProcess({
      argv: ['/bin/sh', '-c', 'sleep 60 > /dev/null 2>&1 & echo "child=$$ grandchild=$!"; exit 0'],
      cwd: dir,
      outputPath,
      killGraceMs: 1000,
    });
    expect(result.exitCode).toBe(0);
    const [, grandchild] = pidsFrom(await fs.readFile(outputPath, 'utf8'));
    expect(isRunning(grandchild)).toBe(false);
  });

  test('a finished command whose background job holds the output pipe does not keep the run waiting', async () => {
    const started = Date.now();
    const result = await runProcess({
      argv: ['/bin/sh', '-c', 'sleep 60 & echo "child=$$ grandchild=$!"; exit 0'],
      cwd: dir,
      outputPath: path.join(dir, 'out.log'),
      killGraceMs: 3000,
    });
    expect(result.exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(isRunning(pidsFrom(result.tail)[1])).toBe(false);
  });

  test('reports progress about once a second at most', async () => {
    const seen: ProcessProgress[] = [];
    await runProcess({
      argv: ['/bin/sh', '-c', 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo line $i; sleep 0.1; done'],
      cwd: dir,
      outputPath: path.join(dir, 'out.log'),
      onProgress: (p) => seen.push(p),
      progressIntervalMs: 400,
    });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.length).toBeLessThanOrEqual(4);
    expect(seen[seen.length - 1].lastLine).toMatch(/^line \d+$/);
    expect(seen[1].outputBytes).toBeGreaterThan(seen[0].outputBytes);
    expect(seen[1].elapsedMs).toBeGreaterThan(seen[0].elapsedMs);
  });

  test('streams 100 MB of output (twice the 50 MB an agent may write) to the file with bounded memory', async () => {
    const outputPath = path.join(dir, 'big.log');
    // 100 chunks of 1 MiB of lines; the last line is distinctive.
    const script =
      "const line = 'x'.repeat(1023) + '\\n'; const mb = line.repeat(1024); let n = 0;" +
      "function more() { while (n < 100) { n++; if (!process.stdout.write(mb)) return process.stdout.once('drain', more); }" +
      " process.stdout.write('done writing\\n'); } more();";
    let peak = 0;
    const sample = () => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.heapUsed + m.arrayBuffers);
    };
    const before = process.memoryUsage();
    const baseline = before.heapUsed + before.arrayBuffers;
    const sampler = setInterval(sample, 20);
    const result = await runProcess({
      argv: [process.execPath, '-e', script],
      cwd: dir,
      outputPath,
      onProgress: sample,
      progressIntervalMs: 50,
    });
    clearInterval(sampler);
    const size = 100 * 1024 * 1024 + 'done writing\n'.length;
    expect(result.exitCode).toBe(0);
    expect(result.outputBytes).toBe(size);
    expect((await fs.stat(outputPath)).size).toBe(size);
    expect(result.lastLine).toBe('done writing');
    expect(Buffer.byteLength(result.tail)).toBeLessThanOrEqual(4096);
    // Holding the output would need at least 100 MB; streaming peaks far lower (uncollected garbage included).
    expect(peak - baseline).toBeLessThan(50 * 1024 * 1024);
  });

  test('a missing command is a clear error naming it', async () => {
    await expect(
      runProcess({
        argv: ['saga-no-such-agent-cli', '--help'],
        cwd: dir,
        outputPath: path.join(dir, 'o.log'),
      }),
    ).rejects.toThrow(/Cannot run 'saga-no-such-agent-cli': command not found \(ENOENT\)/);
  });

  test('a missing working directory is a clear error', async () => {
    await expect(
      runProcess({ argv: ['/bin/true'], cwd: path.join(dir, 'nope'), outputPath: path.join(dir, 'o.log') }),
    ).rejects.toThrow(/working directory .*nope' does not exist/);
  });

  test('an empty argv is rejected', async () => {
    await expect(runProcess({ argv: [], cwd: dir, outputPath: path.join(dir, 'o.log') })).rejects.toThrow(
      /argv is empty/,
    );
  });
});
