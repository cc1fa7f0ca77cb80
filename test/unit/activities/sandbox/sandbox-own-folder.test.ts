/**
 * A custom command's own folder under /tmp (which the sandbox hides) is shown read-only, so the modules beside
 * its script load; never /tmp itself, nor a folder holding the saga home, the worktree or the user's home.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { layoutFor, type ConfineRequest } from '../../../../src/activities/sandbox/layout';

const root = mkdtempSync(path.join(os.tmpdir(), 'saga-own-folder-'));
const sagaHome = path.join(root, 'sagas');
const worktree = path.join(root, 'wt');
const tools = path.join(root, 'tools');
const savedHome = process.env.HOME;

beforeAll(() => {
  for (const dir of [sagaHome, worktree, tools, path.join(root, 'user')]) mkdirSync(dir, { recursive: true });
  for (const file of [
    path.join(tools, 'planner.js'),
    path.join(tools, 'lib.js'),
    path.join(root, 'loose.js'),
  ])
    writeFileSync(file, '');
  process.env.HOME = path.join(root, 'user');
});
afterAll(() => {
  process.env.HOME = savedHome;
  rmSync(root, { recursive: true, force: true });
});

const run = (script: string): ConfineRequest => ({
  mode: 'auto',
  argv: ['node', script],
  cwd: worktree,
  env: { HOME: path.join(root, 'user') },
  sagaHome,
});

test("the script's folder is shown read-only (its sibling modules with it)", async () => {
  const layout = await layoutFor(run(path.join(tools, 'planner.js')), process.execPath);
  expect(layout.readOnly).toContain(tools);
  expect(layout.writable).not.toContain(tools);
});

test('a folder holding the saga home, the worktree and the home is narrowed to the script alone', async () => {
  const loose = path.join(root, 'loose.js');
  const layout = await layoutFor(run(loose), process.execPath);
  expect(layout.readOnly).toContain(loose);
  expect(layout.readOnly).not.toContain(root);
  expect(layout.hiddenDirs).toContain(sagaHome);
});

test('a script directly in /tmp is shown alone, never all of /tmp', async () => {
  const file = path.join(os.tmpdir(), `saga-own-folder-${process.pid}.js`);
  writeFileSync(file, '');
  try {
    const layout = await layoutFor(run(file), process.execPath);
    expect(layout.readOnly).toContain(file);
    expect(layout.readOnly).not.toContain('/tmp');
  } finally {
    rmSync(file, { force: true });
  }
});
