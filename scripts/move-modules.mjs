#!/usr/bin/env node
// Moves TypeScript modules and rewrites every relative import of them (and the moved files' own imports), so a
// restructuring is one reviewable command: `node scripts/move-modules.mjs OLD NEW [OLD NEW ...]` or
// `node scripts/move-modules.mjs --map moves.txt` (one "OLD NEW" pair per line, # comments).
// OLD/NEW are files (`src/a/b.ts`) or folders (`src/a`); a folder moves with everything under it.
// Specifiers keep their style: no extension, and a folder import (`./plan`) stays a folder import.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const SCAN = ['src', 'test', 'bench', 'scripts'];
const SKIP = /(^|\/)(node_modules|dist|tools|public|\.test-artifacts)(\/|$)/;
const EXT = /\.(ts|tsx|js|mjs|cjs)$/;
// `from '…'`, `import('…')`, `require('…')`, `require.resolve('…')`, `jest.mock('…')`, bare `import '…'`.
const SPEC =
  /(\bfrom\s+|\bimport\s*\(\s*|\brequire(?:\.resolve)?\s*\(\s*|\bjest\.(?:mock|requireActual)\s*\(\s*|^import\s+)(['"])(\.{1,2}\/[^'"]*|\.{1,2})\2/gm;

function pairsFromArgs(argv) {
  if (argv[0] === '--map') {
    const words = fs
      .readFileSync(argv[1], 'utf8')
      .split('\n')
      .map((l) => l.replace(/#.*/, '').trim())
      .filter(Boolean)
      .flatMap((l) => l.split(/\s+/));
    return pairsFromArgs(words);
  }
  if (argv.length === 0 || argv.length % 2)
    throw new Error('usage: move-modules.mjs OLD NEW [OLD NEW ...] | --map FILE');
  const pairs = [];
  for (let i = 0; i < argv.length; i += 2) pairs.push([path.normalize(argv[i]), path.normalize(argv[i + 1])]);
  return pairs;
}

function walk(dir, out) {
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (SKIP.test(p)) continue;
    if (e.isDirectory()) walk(p, out);
    else if (EXT.test(p)) out.push(p);
  }
  return out;
}

/** The file a relative specifier names, and whether it named a folder (its index). */
function resolveSpec(fromFile, spec) {
  const base = path.normalize(path.join(path.dirname(fromFile), spec));
  for (const ext of ['', '.ts', '.tsx', '.js', '.mjs']) {
    const f = base + ext;
    if (fs.existsSync(f) && fs.statSync(f).isFile()) return { file: f, folder: false };
  }
  for (const idx of ['index.ts', 'index.js']) {
    const f = path.join(base, idx);
    if (fs.existsSync(f)) return { file: f, folder: true };
  }
  return null;
}

function movedPath(file, pairs) {
  for (const [from, to] of pairs) {
    if (file === from) return to;
    if (file.startsWith(from + path.sep)) return path.join(to, file.slice(from.length + 1));
  }
  return file;
}

function specifier(fromFile, targetFile, folder, oldSpec) {
  let target = folder ? path.dirname(targetFile) : targetFile;
  if (!folder) {
    const ext = path.extname(oldSpec);
    if (!ext) target = target.replace(EXT, '');
  }
  let rel = path.relative(path.dirname(fromFile), target) || '.';
  if (!rel.startsWith('.')) rel = './' + rel;
  return rel;
}

const pairs = pairsFromArgs(process.argv.slice(2));
for (const [from] of pairs) if (!fs.existsSync(from)) throw new Error(`nothing to move at ${from}`);
const files = SCAN.flatMap((d) => walk(d, []));

// Read every import before anything moves, so each resolves against the old tree.
const edits = [];
for (const file of files) {
  const text = fs.readFileSync(file, 'utf8');
  let changed = false;
  const newFile = movedPath(file, pairs);
  const next = text.replace(SPEC, (whole, lead, quote, spec) => {
    const hit = resolveSpec(file, spec);
    if (!hit) return whole;
    const target = movedPath(hit.file, pairs);
    if (target === hit.file && newFile === file) return whole;
    const rewritten = specifier(newFile, target, hit.folder, spec);
    if (rewritten === spec) return whole;
    changed = true;
    return `${lead}${quote}${rewritten}${quote}`;
  });
  if (changed) edits.push([file, next]);
}
for (const [from, to] of pairs) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  execFileSync('git', ['mv', from, to], { stdio: 'inherit' });
}
for (const [file, text] of edits) fs.writeFileSync(movedPath(file, pairs), text);
console.log(`moved ${pairs.length}, rewrote imports in ${edits.length} files`);
