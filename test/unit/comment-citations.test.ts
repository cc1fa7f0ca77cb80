/**
 * Comments in src/ cite only what a reader can open in this repository: docs/PROCEDURE.md by section
 * (`docs/PROCEDURE.md §3.10`), README and ARCHITECTURE sections, files that exist. Not the documents the
 * product was first written from (a procedure prompt, design notes, notes files beside the repository), nor
 * an issue number (say the reason instead). Each finding names the file and line.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const SRC = path.join(ROOT, 'src');
const PROCEDURE = path.join(ROOT, 'docs', 'PROCEDURE.md');
/** Not the repository's own files: dependencies, build output, links to other checkouts. */
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', 'tools', 'coverage']);

function walk(dir: string, keep: (file: string) => boolean, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isSymbolicLink() || SKIP_DIRS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, keep, out);
    else if (keep(full)) out.push(full);
  }
  return out;
}

const isSource = (file: string): boolean => /\.(ts|js|mjs)$/.test(file) && !file.endsWith('.d.ts');

const parse = (file: string, text: string): ts.SourceFile =>
  ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    false,
    file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS,
  );

interface Comment {
  /** 1-based line of the comment's first character. */
  line: number;
  text: string;
}

/** Every comment of a source file (from the parser, so `//` in a string or a regex is no comment). */
function commentsOf(source: ts.SourceFile): Comment[] {
  const text = source.text;
  const ranges = new Map<number, ts.CommentRange>();
  const visit = (node: ts.Node): void => {
    // A JSDoc node lies inside its comment: the comment itself is found at the node it documents.
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    for (const r of ts.getLeadingCommentRanges(text, node.pos) ?? []) ranges.set(r.pos, r);
    for (const r of ts.getTrailingCommentRanges(text, node.end) ?? []) ranges.set(r.pos, r);
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...ranges.values()]
    .sort((a, b) => a.pos - b.pos)
    .map((r) => ({
      line: source.getLineAndCharacterOfPosition(r.pos).line + 1,
      text: text.slice(r.pos, r.end),
    }));
}

/** The string and template texts of a source file: the `.md` names the code itself reads or writes. */
function stringsOf(source: ts.SourceFile): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) out.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The sections docs/PROCEDURE.md has: `N` for `## N. Title`, `N.k` for item k of section N. */
function procedureSections(markdown: string): Set<string> {
  const sections = new Set<string>();
  let current: string | null = null;
  for (const line of markdown.split('\n')) {
    const heading = /^## (\d+)\. /.exec(line);
    if (heading) sections.add((current = heading[1]!));
    else if (/^## /.test(line)) current = null;
    const item = /^(\d+)\. /.exec(line);
    if (item && current) sections.add(`${current}.${item[1]}`);
  }
  return sections;
}

/** What a comment may not cite: the sources outside the repository, by the names comments gave them. */
const OUTSIDE: ReadonlyArray<[RegExp, string]> = [
  [/\bseeds?\b/gi, 'cites the seed, which is not in the repository: cite docs/PROCEDURE.md §N.k'],
  [/\bSaga (procedure|Phase)\b/g, 'cites the Saga procedure by name: cite docs/PROCEDURE.md §N.k'],
  [/\bPhase \d/g, "cites the seed's phases: cite docs/PROCEDURE.md §N.k"],
  [/\bContinuing\W{0,2} step/g, "cites the seed's steps: cite docs/PROCEDURE.md §7.k"],
  [/\bprocedure(?:'s)? steps? \d/gi, "cites the seed's steps: cite docs/PROCEDURE.md §N.k"],
  [/\bissues? #?\d+/gi, 'cites an issue number: say the reason itself'],
  [/\bDESIGN\b/g, 'cites the design notes, which are not in the repository'],
  [/(\.\.\/|\/work\/)shared\b/g, 'cites a file outside the repository'],
];

const MD_NAME = /(?:[\w./*-]|<[\w-]+>)+\.md\b/g;
/** A source file's name: `notify.ts`, `../chat/config.ts`, `src/domain/plan/schema.ts`. */
const SOURCE_NAME = /(?<![\w@/.-])(?:[\w./*-]|<[\w-]+>)*[\w>*]\.(?:ts|js|mjs|cjs)\b(?![\w-])/g;

interface Context {
  sections: Set<string>;
  /** Basenames of the repository's own .md files. */
  repoMarkdown: Set<string>;
  /** Every file of the repository, relative to its root, and the folders that hold them. */
  repoSources: string[];
  dirs: Set<string>;
  /** File names the code uses in strings (the saga directory's files, agents' config files, ...). */
  productNames: Set<string>;
}

function exists(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Why the `.md` name a comment gives is not the repository's, the product's, or a pattern; null when it is. */
function mdProblem(name: string, file: string, ctx: Context): string | null {
  if (/[<*{]/.test(name) || /\bNN\b/.test(name)) return null; // a pattern of generated names
  const base = path.basename(name);
  if (ctx.productNames.has(name) || ctx.productNames.has(base)) return null;
  const candidates = [path.resolve(ROOT, name), path.resolve(path.dirname(file), name)];
  const inside = candidates.filter((c) => c.startsWith(ROOT + path.sep));
  if (inside.some(exists)) return null;
  if (!name.includes('/') && ctx.repoMarkdown.has(base)) return null;
  return `names ${name}, which is not in the repository`;
}

/**
 * Why the source file a comment names is missing; null when it exists, is one the code names in its strings,
 * or is a path in some other repository given as an example (`src/theme.ts`, `/tmp/wt/app.js`): only a bare
 * module name or a path into a folder this repository has counts as a citation.
 */
function sourceProblem(name: string, file: string, ctx: Context): string | null {
  if (/[<*{]/.test(name) || ctx.productNames.has(name) || ctx.productNames.has(path.basename(name)))
    return null;
  const problem = `names ${name}, which is not in the repository`;
  if (!name.includes('/')) return ctx.repoSources.some((f) => path.basename(f) === name) ? null : problem;
  const dir = path.dirname(name);
  if (path.isAbsolute(name) || dir === '.') return null;
  const candidates = [
    path.normalize(dir),
    path.join('src', dir),
    path.relative(ROOT, path.resolve(path.dirname(file), dir)),
  ];
  const known = candidates.find((c) => c !== 'src' && !c.startsWith('..') && ctx.dirs.has(c));
  if (!known) return null;
  return exists(path.join(ROOT, known, path.basename(name))) ? null : problem;
}

function findings(file: string, comment: Comment, ctx: Context): string[] {
  const out: string[] = [];
  const at = (index: number, message: string): void => {
    const line = comment.line + comment.text.slice(0, index).split('\n').length - 1;
    out.push(`${path.relative(ROOT, file)}:${line}: ${message}`);
  };
  for (const [pattern, message] of OUTSIDE)
    for (const m of comment.text.matchAll(pattern)) at(m.index, `${message} ("${m[0]}")`);
  const namesProcedure = comment.text.includes('PROCEDURE.md');
  for (const m of comment.text.matchAll(/§\s*(\d+(?:\.\d+)*)/g)) {
    if (!namesProcedure) at(m.index, `cites ${m[0]} of a document that is not docs/PROCEDURE.md`);
    else if (!ctx.sections.has(m[1]!)) at(m.index, `cites docs/PROCEDURE.md ${m[0]}, which it does not have`);
  }
  for (const m of comment.text.matchAll(MD_NAME)) {
    const problem = mdProblem(m[0], file, ctx);
    if (problem) at(m.index, problem);
  }
  for (const m of comment.text.matchAll(SOURCE_NAME)) {
    const problem = sourceProblem(m[0], file, ctx);
    if (problem) at(m.index, problem);
  }
  return out;
}

function context(parsed: ts.SourceFile[]): Context {
  const productNames = new Set<string>();
  for (const source of parsed)
    for (const s of stringsOf(source))
      for (const m of [...s.matchAll(MD_NAME), ...s.matchAll(SOURCE_NAME)]) {
        productNames.add(m[0]);
        productNames.add(path.basename(m[0]));
      }
  const repoSources = walk(ROOT, () => true).map((f) => path.relative(ROOT, f));
  return {
    sections: procedureSections(readFileSync(PROCEDURE, 'utf8')),
    repoMarkdown: new Set(repoSources.filter((f) => f.endsWith('.md')).map((f) => path.basename(f))),
    repoSources,
    dirs: new Set(repoSources.map((f) => path.dirname(f))),
    productNames,
  };
}

describe('comments in src/ cite what is in the repository', () => {
  const parsed = walk(SRC, isSource).map((f) => parse(f, readFileSync(f, 'utf8')));
  const ctx = context(parsed);

  test('no seed, issue number, outside document, missing .md file or missing § section', () => {
    const found = parsed.flatMap((source) =>
      commentsOf(source).flatMap((c) => findings(source.fileName, c, ctx)),
    );
    expect(found).toEqual([]);
  });

  test('the checker finds each kind, at its line', () => {
    const file = path.join(SRC, 'example.ts');
    const text = [
      'const a = "// seed 003, not a comment";',
      '/**',
      ' * As the Saga procedure, Phase 2 step 5, says (issue 32; board-api.md).',
      ' */',
      'const b = 1; // docs/PROCEDURE.md §3.10 and §99.1; DESIGN §4.4',
      '// ../shared/AGENT-CLI-NOTES.md; SAGA.md and templates/implementer.md are fine',
      '// notify-records.ts and domain/fleet/gone.ts are gone; records.ts, src/theme.ts (an example) are fine',
    ].join('\n');
    const found = commentsOf(parse(file, text)).flatMap((c) => findings(file, c, ctx));
    expect(found.map((f) => f.replace(/: .*/, ''))).toEqual([
      'src/example.ts:3',
      'src/example.ts:3',
      'src/example.ts:3',
      'src/example.ts:3',
      'src/example.ts:5',
      'src/example.ts:5',
      'src/example.ts:6',
      'src/example.ts:6',
      'src/example.ts:7',
      'src/example.ts:7',
    ]);
    expect(found.join('\n')).toContain('§99.1, which it does not have');
    expect(found.join('\n')).toContain('board-api.md, which is not in the repository');
    expect(found.join('\n')).not.toContain('§3.10');
  });
});

describe('docs/PROCEDURE.md', () => {
  test('names only files that exist', () => {
    const text = readFileSync(PROCEDURE, 'utf8');
    const named = [...text.matchAll(/`((?:src|test|templates|bench|scripts)\/[\w./-]+)`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(50);
    expect([...new Set(named)].filter((f) => !exists(path.join(ROOT, f)))).toEqual([]);
  });

  test('cites only sections it has, as README and ARCHITECTURE do', () => {
    const sections = procedureSections(readFileSync(PROCEDURE, 'utf8'));
    const missing = (text: string, pattern: RegExp): string[] =>
      [...text.matchAll(pattern)].map((m) => m[1]!).filter((n) => !sections.has(n));
    expect(missing(readFileSync(PROCEDURE, 'utf8'), /§(\d+(?:\.\d+)?)/g)).toEqual([]);
    for (const doc of ['README.md', 'docs/ARCHITECTURE.md'])
      expect([
        doc,
        missing(readFileSync(path.join(ROOT, doc), 'utf8'), /PROCEDURE\.md\)?,? §(\d+(?:\.\d+)?)/g),
      ]).toEqual([doc, []]);
  });

  test('numbers its sections and steps', () => {
    const sections = procedureSections(readFileSync(PROCEDURE, 'utf8'));
    for (const cited of ['1.3', '2.4', '3.10', '4.4', '6.3', '9.9', '10.7'])
      expect(sections).toContain(cited);
  });
});
