/**
 * Import circles in src/ (docs/ARCHITECTURE.md "Layers": no circle across folders). Every relative import counts: static, type-only,
 * `export … from`, and a lazy `import('…')` (a command's loader is a real arrow: the module it names may not import
 * back). A circle whose files sit in more than one folder fails, and src/client has none at all.
 */
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { PROJECT_ROOT } from '../../src/project-root';

const ROOT = PROJECT_ROOT;
const SRC = path.join(ROOT, 'src');

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(file, out);
    else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(file);
  }
  return out;
}

/** The file a relative specifier names, or undefined for a package or a file outside src/. */
function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  const candidates = [
    base,
    `${base}.ts`,
    `${base}.js`,
    path.join(base, 'index.ts'),
    path.join(base, 'index.js'),
  ];
  const found = candidates.find((f) => existsSync(f) && statSync(f).isFile());
  return found?.startsWith(SRC) ? found : undefined;
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles.map((i) => resolve(file, i.fileName)).filter((f) => f !== undefined);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The graph's strongly connected components of more than one file (Tarjan), each sorted. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.map((f) => path.relative(SRC, f)).sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const crossesFolders = (circle: string[]): boolean => new Set(circle.map((f) => path.dirname(f))).size > 1;

describe('import circles in src/', () => {
  const all = circles(importGraph());

  test('the finder sees a circle (a lazy import counts)', () => {
    const graph = new Map([
      ['/src/a/x.ts', ['/src/b/y.ts']],
      ['/src/b/y.ts', ['/src/a/x.ts']],
      ['/src/b/z.ts', ['/src/b/y.ts']],
    ]);
    expect(circles(graph)).toHaveLength(1);
    const { importedFiles } = ts.preProcessFile(
      "const f = async () => (await import('./lazy')).run;",
      true,
      true,
    );
    expect(importedFiles.map((i) => i.fileName)).toEqual(['./lazy']);
  });

  test('no circle crosses a folder', () => {
    expect(all.filter(crossesFolders)).toEqual([]);
  });

  test('src/client has no circle at all', () => {
    expect(all.filter((c) => c.some((f) => f.startsWith('client/')))).toEqual([]);
  });
});
