/**
 * A milestone's integration worktree is set up (`worktree.setup`) after its task branches
 * are merged, so a dependency a task added is installed for the milestone's checks. The repo's "installer"
 * (`node install.js`, confined like every set-up command) installs what `deps.txt` lists into node_modules;
 * the task adds `leftpad` to deps.txt and code that needs it (installing it in its own worktree, as an
 * agent running `npm install` would), and the milestone's validation requires that code.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createFleetRepo, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import { createInProcessSagaEnv, waitForStatus, type InProcessSagaEnv } from '../../../harness/saga-env';

const USES_LEFTPAD = `node -e "require('./src/use.js')"`;

const INSTALLER = `'use strict';
const fs = require('node:fs');
for (const name of fs.readFileSync('deps.txt', 'utf8').split('\\n').filter(Boolean)) {
  fs.mkdirSync('node_modules/' + name, { recursive: true });
  fs.writeFileSync('node_modules/' + name + '/index.js', 'module.exports = (s) => s;\\n');
}
`;

const PLAN = {
  name: 'setup-after-merge',
  problem: 'Code that needs a new dependency.',
  scope: { in: ['src/use.js', 'deps.txt'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'the code loads', check: USES_LEFTPAD }],
  milestones: [
    {
      id: 1,
      slug: 'core',
      title: 'Use leftpad',
      depends_on: [],
      goal: 'src/use.js with its dependency.',
      validation: [{ text: 'the integrated code loads its dependency', check: USES_LEFTPAD }],
      tasks: [planTask(1, 'use-leftpad', ['src/use.js', 'deps.txt'], USES_LEFTPAD)],
    },
  ],
};

const SCRIPT = {
  tasks: {
    '1.1': {
      attempts: [
        {
          files: {
            'deps.txt': 'leftpad\n',
            'src/use.js': "module.exports = require('leftpad');\n",
            // What its own `npm install leftpad` would leave in its worktree (git-ignored, never merged).
            'node_modules/leftpad/index.js': 'module.exports = (s) => s;\n',
          },
        },
      ],
    },
  },
};

describe('integration set-up', () => {
  let env: InProcessSagaEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('integration-setup');
  });
  afterAll(async () => env.close());

  test("runs after the milestone's merges: a dependency a task added is installed for its checks", async () => {
    const { repo, planFile } = createFleetRepo(env.tmp('setup'), {
      plan: PLAN,
      script: SCRIPT,
      config: 'worktree:\n  setup: [["node", "install.js"]]\n',
      files: { 'install.js': INSTALLER, 'deps.txt': '', '.gitignore': 'node_modules/\n' },
    });
    const { name, sagaDir } = await startApprovedSaga(env, {
      repo,
      planFile,
      name: 'setup-merge',
      args: 'Use leftpad',
    });
    const settled = await waitForStatus(
      env,
      name,
      (s) => s.phase === 'acceptance' || s.log.some((l) => /validation .* failed/.test(l)),
      120_000,
    );
    expect(settled.log.filter((l) => /validation .* failed/.test(l))).toEqual([]);
    expect(settled.log.join('\n')).toMatch(
      /Milestone 1 integrated at \w+; merge order 1\.1; validation passed/,
    );
    expect(settled.milestones[0]).toMatchObject({ status: 'integrated' });
    // The integration's set-up ran on the merged tree: its log is beside the tasks'.
    const setupLog = path.join(sagaDir, 'runs', 'setup', 'integration-1.log');
    expect(existsSync(setupLog)).toBe(true);
    expect(readFileSync(setupLog, 'utf8')).toContain('"install.js"');
  }, 180_000);
});
