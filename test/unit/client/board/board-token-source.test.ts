/**
 * Where the board's token comes from: a file (`--token-file`, `--board-token-file` for `saga dev`) or
 * SAGA_BOARD_TOKEN, neither visible to other users; `--token` still works but says it is visible (ps).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from '../../../../src/client/args';
import { COMMAND_DECLS } from '../../../../src/client/declarations';
import { boardSettings } from '../../../../src/client/commands/board';

const TOKEN = 'board-token-from-file-0123';
const dir = mkdtempSync(path.join(os.tmpdir(), 'board-token-'));
const file = path.join(dir, 'token');
writeFileSync(file, `${TOKEN}\n`);
const saved = process.env.SAGA_BOARD_TOKEN;
afterEach(() => {
  if (saved === undefined) delete process.env.SAGA_BOARD_TOKEN;
  else process.env.SAGA_BOARD_TOKEN = saved;
});

test('--token-file and --board-token-file: the file, trimmed, and no warning', () => {
  const board = boardSettings(parseArgs(COMMAND_DECLS, 'board', ['--token-file', file]), 'board');
  expect({ token: board.token, warning: board.warning }).toEqual({ token: TOKEN, warning: undefined });
  const dev = boardSettings(parseArgs(COMMAND_DECLS, 'dev', ['--board-token-file', file]), 'dev', 'board-');
  expect(dev.token).toBe(TOKEN);
});

test('SAGA_BOARD_TOKEN without a warning; --token with one naming the safer ways', () => {
  process.env.SAGA_BOARD_TOKEN = TOKEN;
  expect(boardSettings(parseArgs(COMMAND_DECLS, 'board', []), 'board')).toMatchObject({ token: TOKEN });
  expect(boardSettings(parseArgs(COMMAND_DECLS, 'board', []), 'board').warning).toBeUndefined();
  delete process.env.SAGA_BOARD_TOKEN;
  const onArgv = boardSettings(parseArgs(COMMAND_DECLS, 'board', ['--token', TOKEN]), 'board');
  expect(onArgv.token).toBe(TOKEN);
  expect(onArgv.warning).toMatch(/every user of this machine can read.*SAGA_BOARD_TOKEN or --token-file/);
});

test('a missing file, both sources at once, or a short token: a clear error', () => {
  expect(() =>
    boardSettings(parseArgs(COMMAND_DECLS, 'board', ['--token-file', path.join(dir, 'nope')]), 'board'),
  ).toThrow(/--token-file .*nope: cannot read it/);
  expect(() =>
    boardSettings(parseArgs(COMMAND_DECLS, 'board', ['--token-file', file, '--token', TOKEN]), 'board'),
  ).toThrow(/not both/);
  const short = path.join(dir, 'short');
  writeFileSync(short, 'abc');
  expect(() => boardSettings(parseArgs(COMMAND_DECLS, 'board', ['--token-file', short]), 'board')).toThrow(
    /at least 16 characters/,
  );
});
