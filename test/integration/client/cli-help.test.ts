/**
 * The `saga` CLI's own surface, through bin/saga (the build must exist: `npm test` builds first): help,
 * version and completion generated from the declarations, usage errors, and the README's command list.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { COMMAND_DECLS, findDecl, type CommandDecl } from '../../../src/client/declarations';
import { PROJECT_ROOT } from '../../../src/project-root';

const ROOT = PROJECT_ROOT;
const BIN = path.join(ROOT, 'bin', 'saga');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function saga(args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Every declared command path: `status`, `chat serve`, `flags parse`... */
const paths: [string, CommandDecl][] = COMMAND_DECLS.flatMap((c) => [
  [c.name, c] as [string, CommandDecl],
  ...(c.subcommands ?? []).map((s) => [`${c.name} ${s.name}`, s] as [string, CommandDecl]),
]);

describe('saga --help, --version, completion', () => {
  test.each(paths)('saga %s --help exits 0 and lists its options', async (cmdPath, decl) => {
    const result = await saga([...cmdPath.split(' '), '--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain(`Usage: saga ${cmdPath}`);
    for (const option of decl.options ?? []) expect(result.stdout).toContain(`--${option.name}`);
    for (const sub of decl.subcommands ?? []) expect(result.stdout).toContain(sub.name);
  });

  test('saga --help and saga help list every command', async () => {
    for (const args of [['--help'], ['help']]) {
      const result = await saga(args);
      expect(result.code).toBe(0);
      for (const decl of COMMAND_DECLS) expect(result.stdout).toMatch(new RegExp(`^  ${decl.name} `, 'm'));
    }
    const bare = await saga([]);
    expect(bare.code).toBe(1);
    expect(bare.stdout).toContain('Usage: saga');
  });

  test('saga --version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const result = await saga(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  test.each(['bash', 'zsh'])('saga completion %s names every command and option', async (shell) => {
    const result = await saga(['completion', shell]);
    expect(result.code).toBe(0);
    for (const [, decl] of paths) {
      expect(result.stdout).toContain(decl.name);
      for (const option of decl.options ?? []) expect(result.stdout).toContain(`--${option.name}`);
    }
    expect(result.stdout).toContain(shell === 'bash' ? 'complete -o default -F _saga saga' : '#compdef saga');
  });
});

describe('usage errors exit 1 naming the problem and the usage line', () => {
  test.each([
    [['status', 'x', '--frobnicate'], /saga status: unknown option '--frobnicate'/],
    [['status'], /saga status: missing required argument 'NAME'/],
    [['status', 'a', 'b'], /saga status: too many arguments/],
    [['respond', 'a', 'b', 'c', '--text'], /saga respond: option '--text <TEXT>' argument missing/],
    [['start', '--repo', '.', '--wat'], /saga start: unknown option '--wat'/],
    [['start', '--', 'Ship it'], /saga start: required option '--repo <PATH>' not specified/],
    [['revise', 'x'], /saga revise: required option '--note <TEXT>' not specified/],
    [['completion', 'fish'], /saga completion: .*'fish' is invalid/],
  ])('saga %j', async (args, message) => {
    const result = await saga(args);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    const decl = findDecl(args[0]!)!;
    expect(decl).toBeDefined();
    expect(result.stderr).toMatch(new RegExp(`^Usage: saga ${args[0]} `, 'm'));
  });

  test('an unknown command exits 1 naming it', async () => {
    const result = await saga(['frobnicate']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("unknown command 'frobnicate'");
  });

  test('saga flags keeps its own grammar: dashes after flags parse are its payload', async () => {
    const result = await saga(['flags', 'parse', '--', '--parallel=3 Ship it']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: null });
  });
});

describe("README's command list (section Real use)", () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Real use'));
  const block = section.slice(
    section.indexOf('```sh') + 5,
    section.indexOf('```', section.indexOf('```sh') + 5),
  );
  /** Each `bin/saga ...` invocation in the block, without comments, quoted text or what follows `--`. */
  const invocations = block
    .split('\n')
    .map((line) => line.replace(/\s#.*$/, ''))
    .flatMap((line) => line.split('|').map((part) => part.trim()))
    .filter((part) => part.startsWith('bin/saga'))
    .map((part) => {
      const words = part
        .replace(/"[^"]*"/g, 'TEXT')
        .split(/\s+/)
        .slice(1);
      const end = words.indexOf('--');
      return end < 0 ? words : words.slice(0, end);
    });

  test('every declared command appears', () => {
    const named = new Set(invocations.map((words) => words[0]));
    for (const decl of COMMAND_DECLS)
      expect({ command: decl.name, inReadme: named.has(decl.name) }).toEqual({
        command: decl.name,
        inReadme: true,
      });
  });

  test('every README command and option is declared', () => {
    for (const words of invocations) {
      if (words[0]!.startsWith('-')) continue; // bin/saga --help
      let decl = findDecl(words[0]!);
      expect({ command: words[0], declared: decl !== undefined }).toEqual({
        command: words[0],
        declared: true,
      });
      if (words[1] && findDecl(`${words[0]} ${words[1]}`)) decl = findDecl(`${words[0]} ${words[1]}`);
      const declared = new Set((decl!.options ?? []).map((o) => `--${o.name}`));
      for (const word of words.slice(1)) {
        const option = word.replace(/^\[/, '').replace(/\]$/, '');
        if (option.startsWith('--') && option !== '--help')
          expect({ command: words[0], option, declared: declared.has(option) }).toEqual({
            command: words[0],
            option,
            declared: true,
          });
      }
    }
  });
});
