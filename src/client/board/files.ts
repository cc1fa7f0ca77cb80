/**
 * The files the board serves: its page from src/client/board/public/ and an allow-list of browser ES modules
 * from node_modules (no build step). Both are found from the project root, as the CLI runs from src/ (tests),
 * dist/src/ or the dist/cli.js bundle; no request path ever reaches the file system unchecked.
 */
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';

/** The directory of this project's package.json, above this file wherever it was built or bundled to. */
export function projectRoot(start = __dirname): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (
      existsSync(file) &&
      (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'saga-on-temporal'
    )
      return dir;
    if (path.dirname(dir) === dir)
      throw new Error(`saga board: no saga-on-temporal package.json above ${start}.`);
  }
}

export const publicDir = (root = projectRoot()): string =>
  path.join(root, 'src', 'client', 'board', 'public');

/** `/vendor/<package>/<path in the package>` → the file: the only node_modules files served. */
export const VENDOR_FILES: readonly string[] = [
  'preact/dist/preact.mjs',
  'preact/hooks/dist/hooks.mjs',
  'htm/dist/htm.mjs',
  'htm/preact/index.mjs',
  '@dagrejs/dagre/dist/dagre.esm.js',
  'marked/lib/marked.esm.js',
  'dompurify/dist/purify.es.mjs',
];

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/** A plain file name of the public folder (no directories, no dot files), else null. */
const PUBLIC_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(html|js|mjs|css|svg|png|ico|json)$/;

export interface StaticFile {
  body: Buffer;
  type: string;
}

async function readKnown(file: string): Promise<StaticFile | null> {
  const type = TYPES[path.extname(file)];
  if (!type) return null;
  try {
    return { body: await fs.readFile(file), type };
  } catch {
    return null;
  }
}

/** A file of the public folder by its name (`index.html`, `app.js`), or null. */
export function publicFile(name: string, root = projectRoot()): Promise<StaticFile | null> {
  if (!PUBLIC_NAME.test(name) || name.includes('..')) return Promise.resolve(null);
  return readKnown(path.join(publicDir(root), name));
}

/** An allow-listed vendor module by its path after `/vendor/`, or null. */
export function vendorFile(rest: string, root = projectRoot()): Promise<StaticFile | null> {
  if (!VENDOR_FILES.includes(rest)) return Promise.resolve(null);
  return readKnown(path.join(root, 'node_modules', ...rest.split('/')));
}
