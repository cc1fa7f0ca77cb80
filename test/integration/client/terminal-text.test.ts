/**
 * An agent's text reaches the user's terminal without its control characters: a real agent prints escape
 * sequences (window title, screen clear, clipboard write, a disguised link, 8-bit CSI) to its transcript and
 * reports blocked with them in its reason. `saga status` (the reason and the spec-gap question it becomes)
 * and `saga logs` print the text, newlines kept, with none of the controls.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { runSaga } from '../../harness/cli';
import { createFleetRepo, planTask, startApprovedSaga } from '../../harness/fleet-saga';
import { createInProcessSagaEnv, waitForStatus, type InProcessSagaEnv } from '../../harness/saga-env';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

const AGENT = `
const fs = require('node:fs');
process.stdout.write('plain line\\n\\x1b]0;pwned-title\\x07\\x1b[2Jcleared\\x1b[31mred\\x1b[0m\\n\\x1b]52;c;ZXZpbA==\\x07after\\rover\\n');
fs.writeFileSync(process.env.SAGA_REPORT_FILE, JSON.stringify({
  status: 'blocked',
  reason: 'SPEC GAP: \\x1b]8;;http://evil.example\\x07click\\x1b]8;;\\x07 and \\x1b[2Kgone\\u009b31m now',
}));
`;

describe('agent text in the terminal', () => {
  let env: InProcessSagaEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('terminal-text');
  });
  afterAll(async () => env.close());

  test('saga status and saga logs print an agent’s text without its escape sequences', async () => {
    const dir = env.tmp('escapes');
    const agent = path.join(dir, 'escapes.js');
    writeFileSync(agent, AGENT);
    const { repo, planFile } = createFleetRepo(dir, {
      plan: {
        name: 'escapes',
        problem: 'One file.',
        scope: { in: ['work.txt'], out: [], delegated: [] },
        exit_criteria: [{ id: 'E1', text: 'work.txt', check: 'test -f work.txt' }],
        milestones: [
          {
            id: 1,
            slug: 'one',
            title: 'One',
            depends_on: [],
            goal: 'work.txt',
            validation: [],
            tasks: [planTask(1, 'work', ['work.txt'], 'test -f work.txt')],
          },
        ],
      },
      script: {},
      config: `agents:\n  escapes: { command: ["{node}", ${JSON.stringify(agent)}] }\n`,
    });
    const name = 'escapes';
    await startApprovedSaga(env, { repo, planFile, name, args: 'Write work.txt', agent: 'escapes' });
    const status = await waitForStatus(
      env,
      name,
      (s) => s.pending.some((p) => /spec gap/.test(p.prompt)),
      120_000,
    );
    // The controls are in what the saga holds (nothing is lost from the record): only the terminal view drops them.
    expect(status.pending.find((p) => /spec gap/.test(p.prompt))!.prompt).toContain(
      '\x1b]8;;http://evil.example',
    );

    const shown = await runSaga(['status', name], env.cliEnv);
    expect(shown).toMatchObject({ code: 0 });
    expect(shown.stdout).toContain('found a spec gap: click and gone now');
    expect(shown.stdout).not.toMatch(CONTROL);

    const logs = await runSaga(['logs', name, '1.1'], env.cliEnv);
    expect(logs).toMatchObject({ code: 0 });
    expect(logs.stdout).toContain('plain line\nclearedred\nafterover\n');
    expect(logs.stdout).not.toMatch(CONTROL);
  }, 240_000);
});
