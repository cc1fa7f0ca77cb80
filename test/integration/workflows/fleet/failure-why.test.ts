/**
 * Failures say why, and a custom command runs confined wherever it lives: a planner under /tmp that
 * `require`s a module beside it plans; one that crashes (writing a log where the sandbox allows no writes)
 * is asked about with its exit status, its stderr's last lines and what the sandbox allows. Real server, real
 * git, bin/saga, bubblewrap, and the demo agent behind a custom command.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { runSaga } from '../../../harness/cli';
import { createFleetRepo, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { PROJECT_ROOT } from '../../../../src/project-root';

jest.setTimeout(180_000);

const DEMO_AGENT = path.resolve(PROJECT_ROOT, 'agents', 'demo-agent.js');

/** One milestone, one task (`task`) that writes a.txt, which the milestone and exit criterion check. */
const aTxtPlan = (name: string, task: Record<string, unknown>) => ({
  name,
  problem: 'One file written by one task.',
  scope: { in: ['a.txt'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'a.txt exists', check: 'test -f a.txt' }],
  milestones: [
    {
      id: 1,
      slug: 'only',
      title: 'Only milestone',
      depends_on: [],
      goal: 'a.txt.',
      validation: [{ text: 'a.txt exists', check: 'test -f a.txt' }],
      tasks: [task],
    },
  ],
});

describe('failures that say why; a custom command beside its own modules', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('failure-why');
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  const cli = async (args: string[]) => {
    const r = await runSaga(args, env.cliEnv);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return r.stdout;
  };

  /** A planner profile `node <dir>/planner.js` (in the user's own config) whose script is `body`. */
  const customPlanner = (profile: string, files: Record<string, string>) => {
    const dir = env.tmp(`agent-${profile}`);
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    mkdirSync(env.sagaHome, { recursive: true });
    writeFileSync(
      path.join(env.sagaHome, 'saga.config.yaml'),
      `agents:\n  ${profile}:\n    command: ["node", "${path.join(dir, 'planner.js')}"]\n    sandbox: auto\n`,
    );
    return dir;
  };

  const startPlanning = async (name: string, profile: string, repo: string) => {
    await cli([
      'start',
      '--repo',
      repo,
      '--name',
      name,
      '--agent',
      profile,
      '--skip-agent-check',
      '--',
      'Greet',
    ]);
    await waitForPending(env, name, 'confirm-name');
    await cli(['respond', name, 'confirm-name', 'confirm']);
  };

  test('a planner under /tmp that requires a module beside it runs confined and plans', async () => {
    const dir = customPlanner('beside', {
      'lib.js': 'module.exports = { ready: true };\n',
      'planner.js': `if (!require('./lib.js').ready) process.exit(3);\nrequire(${JSON.stringify(DEMO_AGENT)});\n`,
    });
    expect(dir.startsWith('/tmp/')).toBe(true);
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const name = 'planner-beside';
    await startPlanning(name, 'beside', repo);
    // Planning goes on to the demo planner's own questions (or its plan), never the invalid-answer question.
    const status = await waitForPending(env, name, /^(planner-invalid-|plan-approval|q\d)/, 120_000);
    expect(status.pending.map((p) => p.id).filter((id) => id.startsWith('planner-invalid-'))).toEqual([]);
  });

  test('a planner that crashes is asked about with its exit status, stderr and what the sandbox allows', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    customPlanner('crashes', {
      // Its log outside the worktree: the repository's checkout is read-only in the sandbox.
      'planner.js': `require('fs').writeFileSync(${JSON.stringify(path.join(repo, 'planner.log'))}, 'x');\n`,
    });
    const name = 'planner-crashes';
    await startPlanning(name, 'crashes', repo);
    await waitForPending(env, name, /^planner-invalid-/, 150_000);
    // What the user reads: `saga status --json` (the board and chat show the same prompt).
    const status = JSON.parse(await cli(['status', name, '--json'])) as SagaStatus;
    const asked = status.pending.find((p) => p.id.startsWith('planner-invalid-'))!;
    expect(asked.prompt).toContain('no JSON answer (planner exit status 1; stderr: ');
    expect(asked.prompt).toContain('EROFS');
    expect(asked.prompt).toContain('the sandbox allows writes only in the worktree');
    expect(asked.prompt).not.toContain('\u001b');
    await cli(['respond', name, asked.id, 'abort']);
  });

  test("a task whose agent crashes escalates with its exit status and stderr's last lines", async () => {
    const dir = env.tmp('agent-task');
    writeFileSync(
      path.join(dir, 'impl.js'),
      "process.stderr.write('\\u001b[31mboom: the model API refused the key\\u001b[0m\\n');\nprocess.exit(2);\n",
    );
    const { repo, planFile } = createFleetRepo(env.tmp('task-crashes'), {
      plan: aTxtPlan('crash', { ...planTask(1, 'write-a', ['a.txt'], 'test -f a.txt'), agent: 'crasher' }),
      script: {},
      config: `agents:\n  crasher:\n    command: ["node", "${path.join(dir, 'impl.js')}"]\n`,
    });
    const name = 'task-crashes';
    await startApprovedSaga(env, { repo, planFile, name, args: 'Write a' });
    const asked = await waitForStatus(
      env,
      name,
      (s) => s.pending.some((p) => p.id.startsWith('esc-m1t1')),
      150_000,
    );
    const esc = asked.pending.find((p) => p.id.startsWith('esc-m1t1'))!;
    const why = 'agent exited with 2; stderr: boom: the model API refused the key';
    expect(esc.prompt).toContain(why);
    expect(esc.prompt).not.toContain('\u001b');
    expect(asked.milestones[0]!.tasks[0]!.reason).toContain(why);
    await cli(['respond', name, esc.id, 'abort']);
  });

  test("a task whose check fails escalates with the check's exit status and stderr's last lines", async () => {
    const check = "echo 'expected greeting, got nothing' >&2; exit 1";
    const { repo, planFile } = createFleetRepo(env.tmp('check-fails'), {
      plan: aTxtPlan('check', planTask(1, 'write-a', ['a.txt'], check)),
      script: { tasks: { '1.1': { attempts: [{ files: { 'a.txt': 'a' } }] } } },
    });
    const name = 'check-fails';
    await startApprovedSaga(env, { repo, planFile, name, args: 'Write a' });
    const asked = await waitForStatus(
      env,
      name,
      (s) => s.pending.some((p) => p.id.startsWith('esc-m1t1')),
      150_000,
    );
    const esc = asked.pending.find((p) => p.id.startsWith('esc-m1t1'))!;
    expect(esc.prompt).toContain('exit 1; stderr: expected greeting, got nothing');
    await cli(['respond', name, esc.id, 'abort']);
  });
});
