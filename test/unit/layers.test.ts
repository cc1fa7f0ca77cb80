/**
 * The layer rules of eslint.config.mjs (docs/ARCHITECTURE.md): a module that imports a layer above its own
 * fails lint, so `npm test` fails; the imports the layers are meant to use pass.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const ESLINT = path.join(ROOT, 'node_modules', '.bin', 'eslint');

/** The layer-rule messages ESLint gives `source` as if it were `file` (the real config, as `npm test` runs it). */
function layerErrors(file: string, source: string): Promise<string[]> {
  // Type-aware rules need the file in the TypeScript project; the layer rules do not.
  const args = [
    '--stdin',
    '--stdin-filename',
    file,
    '--format',
    'json',
    '--parser-options',
    'projectService:false',
  ];
  args.push('--rule', '@typescript-eslint/no-floating-promises: off');
  return new Promise((resolve, reject) => {
    const child = execFile(ESLINT, args, { cwd: ROOT }, (error, stdout) => {
      try {
        const [result] = JSON.parse(stdout) as { messages: { ruleId: string; message: string }[] }[];
        resolve(
          result!.messages
            .filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports')
            .map((m) => m.message),
        );
      } catch {
        reject(error ?? new Error(`eslint printed no JSON: ${stdout}`));
      }
    });
    child.stdin!.end(`${source}\nexport const used = 1;\n`);
  });
}

describe('the layer rules', () => {
  test.each([
    ['src/domain/saga/probe.ts', "import { runProcess } from '../../activities/process';"],
    ['src/domain/saga/probe.ts', "import { readFileSync } from 'node:fs';"],
    ['src/workflows/probe.ts', "import { createActivities } from '../activities';"],
    ['src/workflows/probe.ts', "import { postSlackMessage } from '../chat/outbound';"],
    ['src/activities/git/probe.ts', "import { sagaClient } from '../../client/saga-client';"],
    ['src/activities/probe.ts', "import { sagaWorkflow } from '../workflows/saga';"],
    ['src/worker/probe.ts', "import { main } from '../client/main';"],
    ['src/chat/probe.ts', "import { createActivities } from '../activities';"],
    // The messages contract is in domain now: no module of the workflows layer is re-allowed to anyone.
    ['src/activities/probe.ts', "import { carryQuery } from '../workflows/definitions';"],
    ['src/status/probe.ts', "import { statusQuery } from '../workflows/definitions';"],
  ])('%s may not: %s', async (file, source) => {
    expect(await layerErrors(file, source)).toEqual([
      expect.stringMatching(/may import only the layers below it|must stay deterministic/),
    ]);
  });

  test.each([
    ['src/workflows/probe.ts', "import type { SagaActivities } from '../activities';"],
    ['src/workflows/probe.ts', "import { sagaWorkflowId } from '../domain/saga/naming';"],
    ['src/activities/probe.ts', "import { carryQuery } from '../domain/saga/messages';"],
    ['src/status/probe.ts', "import { statusQuery } from '../domain/saga/messages';"],
    ['src/activities/probe.ts', "import { postSlackMessage } from '../chat/outbound';"],
    ['src/client/commands/probe.ts', "import { createActivities } from '../../activities';"],
    ['src/domain/fleet/probe.ts', "import { noUsage } from '../agents/usage';"],
  ])('%s may: %s', async (file, source) => {
    expect(await layerErrors(file, source)).toEqual([]);
  });
});
