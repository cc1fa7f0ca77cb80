/**
 * Each workflow's API is the handler block at the top of its function: every `setHandler` for a signal,
 * update or query it answers is in the file that defines the workflow, none in the modules it calls. A
 * workflow that asks the user (ask.ts) must list the interactionAnswered signal there, or its answers would
 * wait in a buffer forever.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../src/project-root';

const WORKFLOWS = path.resolve(PROJECT_ROOT, 'src', 'workflows');
const ASK = path.join(WORKFLOWS, 'ask.ts');

/** The saga asks itself: its hub hands each answer over in-process (SagaRun.ask), no signal comes. */
const ASKS_IN_PROCESS = new Set(['sagaWorkflow']);

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return file.endsWith('.ts') ? [file] : [];
  });

/** A file's code without its comments (which may name setHandler). */
const code = (file: string): string =>
  readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');

const resolveFrom = (file: string, spec: string): string => path.resolve(path.dirname(file), `${spec}.ts`);

/** The workflows a worker registers (index.ts) and the files defining them. */
const workflows = (): Map<string, string> => {
  const index = path.join(WORKFLOWS, 'index.ts');
  const exported = readFileSync(index, 'utf8').matchAll(/export \{ (\w+) \} from '(\.[^']+)'/g);
  return new Map([...exported].map((m) => [m[1]!, resolveFrom(index, m[2]!)]));
};

/** Workflow modules a file imports for their values (type-only imports run nothing). */
const valueImports = (file: string): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/^import (?!type )[^;]*? from '(\.[^']+)';/gms)]
    .map((m) => resolveFrom(file, m[1]!))
    .filter((dep) => dep.startsWith(WORKFLOWS));

/** The files a workflow's code runs in: its own and what they import, short of other workflows. */
const reach = (entry: string, entries: Set<string>): Set<string> => {
  const seen = new Set([entry]);
  const queue = [entry];
  for (let file = queue.shift(); file; file = queue.shift()) {
    for (const dep of valueImports(file)) {
      if (seen.has(dep) || entries.has(dep)) continue;
      seen.add(dep);
      queue.push(dep);
    }
  }
  return seen;
};

describe("each workflow's handlers", () => {
  const defined = workflows();
  const entries = new Set(defined.values());

  test('are registered only in the files that define the workflows', () => {
    const elsewhere = sourceFiles(WORKFLOWS)
      .filter((file) => !entries.has(file) && /\bsetHandler\(/.test(code(file)))
      .map((file) => path.relative(WORKFLOWS, file));
    expect(elsewhere).toEqual([]);
  });

  test('include the interactionAnswered signal in every workflow that asks by signal', () => {
    expect(defined.size).toBeGreaterThan(0);
    const missing = [...defined]
      .filter(([name]) => !ASKS_IN_PROCESS.has(name))
      .filter(([, file]) => [...reach(file, entries)].some((f) => valueImports(f).includes(ASK)))
      .filter(([, file]) => !code(file).includes('setHandler(interactionAnsweredSignal'))
      .map(([name]) => name);
    expect(missing).toEqual([]);
  });
});
