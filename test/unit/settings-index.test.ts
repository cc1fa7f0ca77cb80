/**
 * docs/ARCHITECTURE.md "Settings index" names every environment variable the code reads, its default and
 * the module that reads it. This keeps it true: the variables read in src/, bin/ and scripts/ are found the
 * ways the code reads them (`process.env.X`, `env.X`, `env['X']`, a helper given `(env, 'X')`, a constant
 * naming the variable, and a shell script's `${X:-default}`), and the index must name exactly those, each
 * with a module that reads it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/project-root';

const ROOT = PROJECT_ROOT;
const NAME = '[A-Z][A-Z0-9_]*';

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'public' ? [] : filesUnder(rel, ext);
    return ext.test(e.name) ? [rel] : [];
  });
}

/** The code without its comments (block comments, and lines that are a `//` or `#` comment). */
const withoutComments = (text: string): string =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .filter((line) => !/^\s*(\/\/|#)/.test(line))
    .join('\n');

const CODE = [...filesUnder('src', /\.ts$/), ...filesUnder('scripts', /\.(js|mjs)$/), 'bin/saga'].map(
  (file) => ({
    file,
    text: withoutComments(readFileSync(path.join(ROOT, file), 'utf8')),
  }),
);
const SCRIPTS = filesUnder('scripts', /\.sh$/).map((file) => ({
  file,
  text: withoutComments(readFileSync(path.join(ROOT, file), 'utf8')),
}));

/** `const X = 'NAME'` and `const X = { a: 'NAME', ... }` anywhere in src: the variables a constant names. */
function constantsNamingVariables(): Map<string, string[]> {
  const constants = new Map<string, string[]>();
  for (const { text } of CODE) {
    for (const m of text.matchAll(new RegExp(`const (${NAME})\\s*=\\s*'(${NAME})'`, 'g')))
      constants.set(m[1]!, [m[2]!]);
    for (const m of text.matchAll(new RegExp(`const (${NAME})\\s*=\\s*\\{([^}]*)\\}`, 'g')))
      constants.set(
        m[1]!,
        [...m[2]!.matchAll(new RegExp(`'(${NAME})'`, 'g'))].map((v) => v[1]!),
      );
  }
  return constants;
}

/** Every variable read, with the files that read it. */
function variablesRead(): Map<string, Set<string>> {
  const read = new Map<string, Set<string>>();
  const add = (name: string, file: string) => read.set(name, (read.get(name) ?? new Set()).add(file));
  const constants = constantsNamingVariables();
  const patterns = [
    // process.env.X, env.X, env?.X, request.env.X; not an assignment (env.X = ...).
    new RegExp(`\\benv\\??\\.(${NAME})\\b(?!\\s*=[^=])`, 'g'),
    new RegExp(`\\benv\\[\\s*['"\`](${NAME})['"\`]\\s*\\]`, 'g'),
    // optional(env, 'X'), wholeNumber(env, 'X', ...)
    new RegExp(`\\(\\s*env\\s*,\\s*'(${NAME})'`, 'g'),
  ];
  // env[X], setting(env, X.key): X a constant naming the variable(s).
  const indirect = new RegExp(`(?:\\benv\\[\\s*|\\(\\s*env\\s*,\\s*)(${NAME})\\b`, 'g');
  for (const { file, text } of CODE) {
    for (const pattern of patterns) for (const m of text.matchAll(pattern)) add(m[1]!, file);
    for (const m of text.matchAll(indirect)) for (const name of constants.get(m[1]!) ?? []) add(name, file);
  }
  for (const { file, text } of SCRIPTS)
    for (const m of text.matchAll(new RegExp(`\\$\\{(${NAME}):?[-+]`, 'g'))) add(m[1]!, file);
  return read;
}

/** The index's rows: each variable (first column) with the files its last column names. */
function indexRows(): Map<string, string[]> {
  const doc = readFileSync(path.join(ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Settings index'));
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const m = new RegExp(`^\\| \`(${NAME})\` \\|.*\\|([^|]*)\\|\\s*$`).exec(line);
    if (m)
      rows.set(
        m[1]!,
        [...m[2]!.matchAll(/`([\w./-]+)`/g)].map((f) => f[1]!),
      );
  }
  return rows;
}

describe('the settings index (docs/ARCHITECTURE.md)', () => {
  const read = variablesRead();
  const rows = indexRows();

  test('is there and finds the variables the code reads', () => {
    expect(rows.size).toBeGreaterThan(30);
    // A sample of each way of reading: direct, env['X'], a helper, a constant, a script.
    for (const name of [
      'SAGA_HOME',
      'SAGA_APPROVERS',
      'SAGA_CODEC_KEY_FILE',
      'SAGA_GIT_TIMEOUT_MS',
      'SAGA_STACK_DIR',
    ])
      expect(read.has(name)).toBe(true);
  });

  test('names every variable the code reads', () => {
    expect([...read.keys()].filter((name) => !rows.has(name)).sort()).toEqual([]);
  });

  test('names no variable the code does not read', () => {
    expect([...rows.keys()].filter((name) => !read.has(name)).sort()).toEqual([]);
  });

  test('names, for each variable, a module that reads it (and only modules that do)', () => {
    const wrong = [...rows].flatMap(([name, files]) => {
      const readers = read.get(name) ?? new Set<string>();
      if (files.length === 0) return [`${name}: no module named`];
      return files
        .filter((f) => !existsSync(path.join(ROOT, f)) || !readers.has(f))
        .map((f) => `${name}: ${f}`);
    });
    expect(wrong).toEqual([]);
  });
});
