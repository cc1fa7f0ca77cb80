/**
 * The layer rules of eslint.config.mjs (docs/ARCHITECTURE.md): a module that imports a layer above its own
 * fails lint, so `npm test` fails; the imports the layers are meant to use pass.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/project-root';

const ROOT = PROJECT_ROOT;
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
    ['src/workflows/probe.ts', "import { sagaWorkflowId } from '../domain/contract/naming';"],
    ['src/activities/probe.ts', "import { carryQuery } from '../domain/saga/messages';"],
    ['src/status/probe.ts', "import { statusQuery } from '../domain/saga/messages';"],
    ['src/activities/probe.ts', "import { postSlackMessage } from '../chat/outbound';"],
    ['src/client/commands/probe.ts', "import { createActivities } from '../../activities';"],
    ['src/domain/fleet/probe.ts', "import { noUsage } from '../agents/usage';"],
    // The domain's floors: a folder may import those below it, inside the domain layer's own rule.
    ['src/domain/fleet/probe.ts', "import { UNACHIEVABLE_OPTIONS } from '../planning/unachievable';"],
    ['src/domain/contract/probe.ts', "import { zodIssueLines } from '../text/zod-errors';"],
    ['src/domain/saga/probe.ts', "import { reconciliationSummary } from '../record/reconciliation';"],
    ['src/domain/agents/cli-output/probe.ts', "import type { Usage } from '../../contract/state';"],
  ])('%s may: %s', async (file, source) => {
    expect(await layerErrors(file, source)).toEqual([]);
  });
});

describe('the domain floors (text < contract < config < agents < plan < request < planning < fleet < record < saga)', () => {
  test.each([
    ['src/domain/text/probe.ts', "import type { Usage } from '../contract/state';"],
    ['src/domain/contract/probe.ts', "import { TEXT_FORMATS } from '../planning/acceptance-issues';"],
    ['src/domain/contract/probe.ts', "import type { FlagsResult } from '../request/flags';"],
    ['src/domain/config/probe.ts', "import { BUDGET_ON_EXHAUSTED } from '../fleet/budget';"],
    ['src/domain/agents/cli-output/probe.ts', "import { sagaWorkflowId } from '../../saga/messages';"],
    ['src/domain/plan/probe.ts', "import { parseFlags } from '../request/flags';"],
    ['src/domain/planning/probe.ts', "import { budgetRaiseProblem } from '../fleet/budget';"],
    ['src/domain/fleet/probe.ts', "import { reconciliationSummary } from '../record/reconciliation';"],
    ['src/domain/record/probe.ts', "import { textFormatProblem } from '../saga/interactions';"],
  ])('%s may not: %s', async (file, source) => {
    expect(await layerErrors(file, source)).toEqual([
      expect.stringMatching(/may import only the domain folders below it/),
    ]);
  });

  test('every domain folder but the top one has its floor rule', async () => {
    const top = 'saga';
    const folders = readdirSync(path.join(ROOT, 'src', 'domain'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== top)
      .map((e) => e.name);
    const refused = await Promise.all(
      folders.map((f) => layerErrors(`src/domain/${f}/probe.ts`, `import { x } from '../${top}/probe';`)),
    );
    expect(folders.filter((_, i) => refused[i]!.length === 0)).toEqual([]);
  });

  test('the floor rules keep the domain layer rule (no activities, no Node I/O)', async () => {
    expect(
      await layerErrors(
        'src/domain/fleet/probe.ts',
        "import { runProcess } from '../../activities/process';",
      ),
    ).toEqual([expect.stringMatching(/src\/domain\/fleet may import only the layers below it/)]);
    expect(await layerErrors('src/domain/text/probe.ts', "import { readFileSync } from 'node:fs';")).toEqual([
      expect.stringMatching(/must stay deterministic/),
    ]);
  });
});
