/** The new-saga form's server side: what the form's fields must hold, the flag vocabulary, `--repo`. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from '../../../../src/client/args';
import { boardSettings } from '../../../../src/client/commands/board';
import { argumentsOf, flagChoices, StartBody } from '../../../../src/client/board/steer-routes';
import { COMMAND_DECLS } from '../../../../src/client/declarations';
import { FLAG_VOCABULARY, parseFlags } from '../../../../src/domain/request/flags';

describe('argumentsOf: the form as saga start arguments', () => {
  it('puts the flags before the goal, as saga start takes them', () => {
    const text = argumentsOf({ goal: ' Add a greeting ', flags: '--autonomous  --parallel=3' });
    expect(text).toBe('--autonomous --parallel=3 Add a greeting');
    expect(parseFlags(text, {})).toMatchObject({
      goal: 'Add a greeting',
      autonomous: true,
      parallel_lanes: 3,
    });
  });

  it('refuses an empty goal, a goal that reads as a flag, and a flags text that is not only flags', () => {
    expect(() => argumentsOf({ goal: '  ', flags: '' })).toThrow('goal: write what the saga should do.');
    expect(() => argumentsOf({ goal: '--x do it', flags: '' })).toThrow(/^goal: starts with '--'/);
    expect(() => argumentsOf({ goal: 'Add', flags: '--autonomous and more' })).toThrow(
      "flags: 'and' is not a flag (flags start with --; the goal has its own field).",
    );
  });

  it('the body schema refuses unknown fields and a budget that is not positive', () => {
    const good = { repo: '/r', goal: 'g', confirm: false };
    expect(StartBody.safeParse(good).success).toBe(true);
    expect(StartBody.safeParse({ ...good, budgetUsd: 0 }).success).toBe(false);
    expect(StartBody.safeParse({ ...good, path: '/etc' }).success).toBe(false);
    expect(StartBody.safeParse({ ...good, confirm: 'yes' }).success).toBe(false);
  });
});

describe('flagChoices: the form offers the parser’s own vocabulary', () => {
  it('lists every flag of FLAG_VOCABULARY with its spelling, and the lane cap', () => {
    const choices = flagChoices();
    expect(choices.flags.map((f) => f.key)).toEqual([...FLAG_VOCABULARY.keys]);
    expect(choices.flags.map((f) => f.flag)).toContain('--quality-locked');
    expect(choices).toMatchObject({ valueFlag: '--parallel', maxLanes: FLAG_VOCABULARY.maxLanes });
  });
});

describe('saga board --repo', () => {
  const settings = (argv: string[]) => boardSettings(parseArgs(COMMAND_DECLS, 'board', argv), 'board');

  it('takes each --repo as an absolute folder, and refuses one that is not a folder', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'board-repo-'));
    const file = path.join(dir, 'file.txt');
    writeFileSync(file, 'x');
    expect(settings(['--repo', dir, '--repo', path.relative(process.cwd(), dir)]).repos).toEqual([dir, dir]);
    expect(settings([]).repos).toEqual([]);
    expect(() => settings(['--repo', file])).toThrow(`saga board: --repo ${file}: no such folder.`);
    // saga dev takes it as --board-repo.
    const dev = boardSettings(parseArgs(COMMAND_DECLS, 'dev', ['--board-repo', dir]), 'dev', 'board-');
    expect(dev.repos).toEqual([dir]);
  });
});
