/**
 * The workflow code as one prebuilt bundle (written by `npm run build`). Bundling at worker start costs
 * about a second and a half and leaves the worker ~120 MB larger; a larger process also pays more for
 * every git or agent process it spawns (fork copies its page tables).
 */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';

const WORKFLOWS = require.resolve('../workflows');
/** Loaded once per worker and shared by every workflow (see src/workflows/preload.ts). */
const SHARED_MODULES = require.resolve('../workflows/preload');
/** Next to the compiled sources: dist/workflow-bundle.js. */
export const PREBUILT_WORKFLOW_BUNDLE = path.join(__dirname, '..', '..', 'workflow-bundle.js');

/** Newest modification time of the compiled modules under `dir`, its sub-folders included. */
function newestModule(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestModule(file));
    else if (entry.name.endsWith('.js')) newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

/** Newest modification time of the compiled workflow and domain modules the bundle is made of. */
const newestSource = (): number =>
  Math.max(...['workflows', 'domain'].map((d) => newestModule(path.join(__dirname, '..', d))));

/** The prebuilt bundle when it is there and newer than the code it was made from; else null. */
export function prebuiltWorkflowBundle(): string | null {
  if (!existsSync(PREBUILT_WORKFLOW_BUNDLE)) return null;
  return statSync(PREBUILT_WORKFLOW_BUNDLE).mtimeMs >= newestSource() ? PREBUILT_WORKFLOW_BUNDLE : null;
}

/** The workflow code for a worker or a replay: the prebuilt bundle when it is current, else the sources. */
export function workflowCode(
  bundlePath: string | null = prebuiltWorkflowBundle(),
): { workflowBundle: { codePath: string } } | { workflowsPath: string } {
  return bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath: WORKFLOWS };
}

/** The saga's workflows bundled (the build, the tests' global set-up and the benches all bundle here). */
export async function bundleSagaWorkflows(): Promise<string> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS,
    preloadModules: [SHARED_MODULES],
    logger: new DefaultLogger('WARN'),
  });
  return bundle.code;
}

export async function writeWorkflowBundle(file = PREBUILT_WORKFLOW_BUNDLE): Promise<void> {
  writeFileSync(file, await bundleSagaWorkflows());
}

if (require.main === module)
  writeWorkflowBundle().catch((error: unknown) => {
    process.stderr.write(`Could not bundle the workflows: ${String(error)}\n`);
    process.exit(1);
  });
