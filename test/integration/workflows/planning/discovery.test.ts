/** Environment discovery against real repos in temp folders; every confirmation really runs. */
import { existsSync, mkdtempSync, promises as fs, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createDiscoveryActivities } from '../../../../src/activities/planning/discovery';
import type { Environment } from '../../../../src/domain/planning/environment';
import { processesRunning } from '../../../harness/processes';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'saga-discovery-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function makeRepo(files: Record<string, string>): Promise<string> {
  const repo = path.join(root, 'repo');
  await fs.mkdir(repo, { recursive: true });
  for (const [name, content] of Object.entries(files)) await fs.writeFile(path.join(repo, name), content);
  return repo;
}

describe('discoverEnvironment', () => {
  it('finds and confirms the commands of a node repo, with logs', async () => {
    const repo = await makeRepo({
      'package.json': JSON.stringify({
        name: 'demo',
        bin: { demo: 'index.js' },
        scripts: {
          test: 'node -e "process.exit(0)"',
          lint: 'node -e "console.log(\'lint says no\'); process.exit(2)"',
          start: 'node index.js',
        },
      }),
      'index.js': 'console.log("hi")\n',
    });
    const sagaDir = path.join(root, 'saga');
    const { discoverEnvironment } = createDiscoveryActivities({ env: { ...process.env, DISPLAY: ':0' } });
    const env = await discoverEnvironment({ repo, sagaDir, timeoutMs: 60_000 });

    expect(env).toMatchObject({
      programType: 'CLI/library',
      programTypeReason: 'package.json has a bin field',
      languages: ['JavaScript'],
      launch: 'npm start',
      computerUse: 'local',
    });
    const byPurpose = Object.fromEntries(env.commands.map((c) => [c.purpose, c]));
    expect(Object.keys(byPurpose).sort()).toEqual(['launch', 'lint', 'test']);
    const logDir = path.join(sagaDir, 'runs', 'discovery');
    expect(byPurpose.test).toMatchObject({
      argv: ['npm', 'test'],
      source: 'package.json scripts.test',
      confirmed: 'passed',
      exitCode: 0,
      outputPath: path.join(logDir, 'test.log'),
    });
    expect(byPurpose.lint).toMatchObject({ argv: ['npm', 'run', 'lint'], confirmed: 'failed', exitCode: 2 });
    expect(byPurpose.launch).toMatchObject({
      argv: ['npm', 'start'],
      confirmed: 'not-run',
      outputPath: null,
    });
    expect(byPurpose.test.durationMs).toBeGreaterThan(0);
    expect(await fs.readFile(path.join(logDir, 'lint.log'), 'utf8')).toMatch(
      /"npm","run","lint"[\s\S]*lint says no/,
    );
    expect(env.notes).toEqual(
      expect.arrayContaining([
        'no build command found',
        expect.stringMatching(/^lint: `npm run lint` failed/),
      ]),
    );
  });

  it('confirms Makefile targets, kills a timed-out tree and heartbeats', async () => {
    const repo = await makeRepo({
      Makefile: [
        'test:',
        '\t@echo make-tests-ok',
        'build:',
        '\t@true',
        'lint:',
        '\t@exit 3',
        'typecheck:',
        "\t@sh -c 'echo $$$$ > sleeper.pid; exec sleep 30.25'",
        'run:',
        '\t@echo running',
        '',
      ].join('\n'),
    });
    const sagaDir = path.join(root, 'saga');
    const { discoverEnvironment } = createDiscoveryActivities({
      env: { ...process.env, DISPLAY: '', WAYLAND_DISPLAY: '' },
      heartbeatIntervalMs: 100,
      killGraceMs: 500,
    });
    const mock = new MockActivityEnvironment();
    const beats: unknown[] = [];
    mock.on('heartbeat', (details: unknown) => beats.push(details));
    const env = (await mock.run(discoverEnvironment, { repo, sagaDir, timeoutMs: 1500 })) as Environment;

    expect(env).toMatchObject({
      programType: 'unknown',
      languages: [],
      launch: 'make run',
      computerUse: 'not available',
    });
    const summary = env.commands.map((c) => [c.purpose, c.argv.join(' '), c.confirmed, c.exitCode]);
    expect(summary).toEqual([
      ['test', 'make test', 'passed', 0],
      ['build', 'make build', 'passed', 0],
      ['lint', 'make lint', 'failed', 2],
      ['typecheck', 'make typecheck', 'timed-out', null],
      ['launch', 'make run', 'not-run', null],
    ]);
    expect(await fs.readFile(path.join(sagaDir, 'runs', 'discovery', 'test.log'), 'utf8')).toContain(
      'make-tests-ok',
    );
    expect(await fs.readFile(path.join(repo, 'sleeper.pid'), 'utf8')).toMatch(/^\d+/);
    // Confined, its pid is its namespace's: found on the host by what it runs.
    expect(processesRunning('sleep 30.25')).toEqual([]);
    expect(beats).toContainEqual(expect.objectContaining({ step: 'discovery', purpose: 'typecheck' }));
  });

  it('records a command whose program is missing as failed', async () => {
    const repo = await makeRepo({
      'go.mod': 'module example.com/demo\n\ngo 1.22\n',
      'main.go': 'package main\n',
    });
    const { discoverEnvironment } = createDiscoveryActivities({
      env: { PATH: path.join(root, 'empty-path') },
    });
    const env = await discoverEnvironment({ repo, sagaDir: path.join(root, 'saga'), timeoutMs: 10_000 });
    expect(env.commands.find((c) => c.purpose === 'test')).toMatchObject({
      argv: ['go', 'test', './...'],
      confirmed: 'failed',
      exitCode: null,
    });
    expect(env.launch).toBe('go run .');
    expect(existsSync(path.join(root, 'saga', 'runs', 'discovery', 'test.log'))).toBe(true);
  });

  it('rejects a repo folder that does not exist', async () => {
    const { discoverEnvironment } = createDiscoveryActivities();
    await expect(
      discoverEnvironment({ repo: path.join(root, 'nope'), sagaDir: root, timeoutMs: 1000 }),
    ).rejects.toMatchObject({ type: 'InvalidInput', nonRetryable: true });
  });
});
