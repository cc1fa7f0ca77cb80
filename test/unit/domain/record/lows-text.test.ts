/** Agent text made safe for a terminal, and which landed files acceptance names as running on their own. */
import {
  autoRunFiles,
  autoRunPromptLine,
  packageInstallScripts,
} from '../../../../src/domain/record/auto-run-files';
import { oneTerminalLine, stripControls } from '../../../../src/domain/text/terminal';

describe('stripControls', () => {
  test.each([
    ['CSI (colour, clear screen, cursor moves)', 'a\x1b[31mb\x1b[0m\x1b[2J\x1b[10;1Hc', 'abc'],
    ['OSC window title ended by BEL', 'x\x1b]0;pwned\x07y', 'xy'],
    ['OSC 52 clipboard ended by ST', 'x\x1b]52;c;ZXZpbA==\x1b\\y', 'xy'],
    [
      'OSC 8 link: the label stays, the target goes',
      '\x1b]8;;http://evil.example\x07label\x1b]8;;\x07',
      'label',
    ],
    ['an unterminated OSC runs to the end', 'x\x1b]0;never ends', 'x'],
    ['DCS', 'x\x1bPq#0;2;0;0;0\x1b\\y', 'xy'],
    ['8-bit CSI and OSC', 'x\x9b2Jy\x9d0;t\x07z', 'xyz'],
    ['other C0, C1, DEL and a lone ESC', 'a\x00b\x07c\x08d\x7fe\x85f\x1b', 'abcdef'],
    ['carriage return (overwrites a line)', 'safe\rEVIL', 'safeEVIL'],
    ['newline and tab kept, CR LF made LF', 'a\tb\r\nc\n', 'a\tb\nc\n'],
    ['plain Unicode kept', 'café — ✓ 日本', 'café — ✓ 日本'],
  ])('%s', (_what, input, expected) => {
    expect(stripControls(input)).toBe(expected);
  });

  test('oneTerminalLine also folds newlines and tabs', () => {
    expect(oneTerminalLine('a\nb\tc\x1b[2K')).toBe('a b c');
  });
});

describe('autoRunFiles', () => {
  test('names the files tools run on their own, and only those', () => {
    const paths = [
      '.envrc',
      'sub/.envrc',
      '.vscode/tasks.json',
      '.vscode/settings.json',
      '.vscode/extensions.json',
      '.claude/settings.json',
      '.mcp.json',
      '.gitattributes',
      'docs/.gitattributes',
      '.husky/pre-commit',
      '.githooks/post-checkout',
      '.github/workflows/ci.yml',
      '.pre-commit-config.yaml',
      'saga.config.yaml',
      '.sage/config.yaml',
      '.npmrc',
      'package.json',
      'lib/package.json',
      'src/index.ts',
      'Makefile',
      'README.md',
    ];
    const found = autoRunFiles(paths, { 'package.json': ['postinstall'], 'lib/package.json': [] });
    expect(found.map((f) => f.path)).toEqual([
      '.envrc',
      'sub/.envrc',
      '.vscode/tasks.json',
      '.vscode/settings.json',
      '.claude/settings.json',
      '.mcp.json',
      '.gitattributes',
      'docs/.gitattributes',
      '.husky/pre-commit',
      '.githooks/post-checkout',
      '.github/workflows/ci.yml',
      '.pre-commit-config.yaml',
      'saga.config.yaml',
      '.sage/config.yaml',
      '.npmrc',
      'package.json',
    ]);
    expect(found.find((f) => f.path === 'package.json')!.runBy).toBe('npm, on install (scripts postinstall)');
  });

  test('reads the install scripts of a package.json; what does not parse has none', () => {
    expect(
      packageInstallScripts(JSON.stringify({ scripts: { test: 'x', prepare: 'y', postinstall: 'z' } })),
    ).toEqual(['postinstall', 'prepare']);
    expect(packageInstallScripts('{ not json')).toEqual([]);
    expect(packageInstallScripts('null')).toEqual([]);
  });

  test('the prompt line names them without an agent path’s control characters, and caps the list', () => {
    expect(autoRunPromptLine([])).toBe('');
    const line = autoRunPromptLine([{ path: 'a\x1b[2K\n.envrc', runBy: 'direnv' }]);
    expect(line).toContain('a .envrc (direnv)');
    expect(line).not.toMatch(/[\x00-\x1f]/); // eslint-disable-line no-control-regex
    const many = Array.from({ length: 15 }, (_, i) => ({ path: `d${i}/.envrc`, runBy: 'direnv' }));
    expect(autoRunPromptLine(many)).toContain('d11/.envrc (direnv), and 3 more');
  });
});
