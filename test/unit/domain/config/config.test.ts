import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findSagaRoot, loadSagaConfig } from '../../../../src/activities/config-loader';
import {
  BUILTIN_AGENTS,
  checkTimeoutMs,
  DEFAULT_SAGA_CONFIG,
  expandCommand,
  type SagaConfig,
} from '../../../../src/domain/config/config';
import { resolveAgentProfile } from '../../../../src/domain/config/profile-resolution';
import { parseDuration } from '../../../../src/domain/config/units';
import { parseSagaConfigText } from '../../../../src/domain/config/config-text';
import { formatPath } from '../../../../src/domain/text/zod-errors';
import { DEFAULT_MODEL_PRICES } from '../../../../src/domain/config/model-prices';

function parseOk(text: string): SagaConfig {
  const result = parseSagaConfigText(text, 'saga.config.yaml');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.config;
}

function parseErrors(text: string): string[] {
  const result = parseSagaConfigText(text, 'saga.config.yaml');
  if (result.ok) throw new Error('expected errors');
  return result.errors;
}

describe('parseDuration', () => {
  test.each([
    ['45m', 45 * 60_000],
    ['90s', 90_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1.5m', 90_000],
  ])('%s = %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  test.each(['45', '45 minutes', '', 'm', '-5m', '0s', '10d'])('rejects %p', (text) => {
    expect(() => parseDuration(text)).toThrow(/Invalid duration/);
  });
});

describe('SagaConfigSchema defaults', () => {
  test('an empty file gives the documented defaults', () => {
    const config = parseOk('');
    expect(config).toEqual(DEFAULT_SAGA_CONFIG);
    expect(config).toMatchObject({
      default_agent: 'claude',
      agents: {},
      worktree: { copy: [], setup: [], port_range_size: 10 },
      attempts: 3,
      check_timeout: '10m',
      budget: {},
    });
    expect(checkTimeoutMs(config)).toBe(600_000);
  });

  test('the config example of the README parses', () => {
    const config = parseOk(`
default_agent: claude
agents:
  claude:
    command: ["claude", "-p", "{prompt}"]
    timeout: 45m
    subagent_dispatch: true
  mine:
    command: ["node", "tools/my-agent.js", "{prompt_file}"]
worktree:
  copy: [.env]
  setup: [["npm", "ci"]]
budget: { task_usd: 2, saga_usd: 20 }
`);
    // The user's own command: its prompt goes in as the command says, its output is read as plain text.
    expect(resolveAgentProfile(config)).toEqual({
      name: 'claude',
      command: ['claude', '-p', '{prompt}'],
      promptInput: 'argument',
      output: 'text',
      model: null,
      prices: DEFAULT_MODEL_PRICES,
      timeoutMs: 45 * 60_000,
      idleTimeoutMs: 10 * 60_000,
      subagentDispatch: true,
      env: { DISABLE_AUTOUPDATER: '1' }, // the preset's env stays: it is not about the command
      passEnv: [],
      configFile: null,
      resumeCommand: null, // its output is plain text: no session id to resume
      sandbox: 'auto',
      network: ['api.anthropic.com:443'],
      sources: null,
    });
    expect(resolveAgentProfile(config, 'mine')).toMatchObject({
      command: ['node', 'tools/my-agent.js', '{prompt_file}'],
      subagentDispatch: true, // not said: the saga dispatches its runs as fresh processes
      timeoutMs: 45 * 60_000,
    });
    expect(config.worktree.setup).toEqual([['npm', 'ci']]);
    expect(config.budget).toEqual({ task_usd: 2, saga_usd: 20, on_exhausted: 'finish' });
  });
});

describe('resolveAgentProfile', () => {
  test('built-in presets exist without any config; the CLI presets take the prompt on stdin', () => {
    expect(resolveAgentProfile(DEFAULT_SAGA_CONFIG, 'claude')).toMatchObject({
      command: [
        'claude',
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--permission-mode',
        'acceptEdits',
        '--allowedTools',
        'Bash',
      ],
      promptInput: 'stdin',
      output: 'claude',
      subagentDispatch: true,
    });
    for (const name of ['codex', 'gemini', 'opencode']) {
      const profile = resolveAgentProfile(DEFAULT_SAGA_CONFIG, name);
      expect(profile).toMatchObject({ promptInput: 'stdin', output: name });
      // Never the prompt itself as one argument (Linux caps one at 128 KiB).
      expect(profile.command.join(' ')).not.toMatch(/\{prompt\}/);
    }
    expect(resolveAgentProfile(DEFAULT_SAGA_CONFIG, 'aider').command).toContain('{prompt_file}');
    expect(resolveAgentProfile(DEFAULT_SAGA_CONFIG, 'demo')).toMatchObject({ subagentDispatch: true });
  });

  test('a user entry named like a preset overrides only the fields it sets', () => {
    const config = parseOk('agents:\n  claude:\n    timeout: 2h\n    env: { CLAUDE_FLAG: "1" }\n');
    expect(resolveAgentProfile(config, 'claude')).toEqual({
      name: 'claude',
      command: BUILTIN_AGENTS.claude!.command,
      promptInput: 'stdin',
      output: 'claude',
      model: null,
      prices: DEFAULT_MODEL_PRICES,
      timeoutMs: 7_200_000,
      idleTimeoutMs: 600_000,
      subagentDispatch: true,
      env: { DISABLE_AUTOUPDATER: '1', CLAUDE_FLAG: '1' },
      passEnv: [],
      configFile: null,
      resumeCommand: [...BUILTIN_AGENTS.claude!.command!, '--resume', '{session}'],
      sandbox: 'auto',
      network: ['api.anthropic.com:443'],
      sources: null,
    });
  });

  test('sandbox: auto by default, none at the top level or per profile; network entries checked', () => {
    expect(resolveAgentProfile(DEFAULT_SAGA_CONFIG, 'demo').sandbox).toBe('auto');
    const config = parseOk(
      'sandbox: none\nagents:\n  claude: { sandbox: auto, network: ["127.0.0.1:4100"] }\n',
    );
    expect(resolveAgentProfile(config, 'demo').sandbox).toBe('none');
    expect(resolveAgentProfile(config, 'claude')).toMatchObject({
      sandbox: 'auto',
      network: ['api.anthropic.com:443', '127.0.0.1:4100'],
    });
    expect(parseSagaConfigText('sandbox: off', 'c.yaml')).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/^c\.yaml: sandbox: .*'auto' \| 'none'/)],
    });
    expect(
      parseSagaConfigText('agents:\n  claude: { network: [api.anthropic.com] }', 'c.yaml'),
    ).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/agents\.claude\.network\[0\]: 'api\.anthropic\.com' is not host:port/)],
    });
  });

  test("the resume command: from the preset, before Codex's stdin `-`; none with resume: false or no preset", () => {
    const config = parseOk(
      'agents:\n  gemini: { resume: false }\n  mine: { command: [my-agent], output: claude }\n',
    );
    expect(resolveAgentProfile(config, 'codex').resumeCommand).toEqual([
      'codex',
      'exec',
      '--json',
      '--sandbox',
      'workspace-write',
      '--skip-git-repo-check',
      'resume',
      '{session}',
      '-',
    ]);
    expect(resolveAgentProfile(config, 'opencode').resumeCommand?.slice(-2)).toEqual([
      '--session',
      '{session}',
    ]);
    expect(resolveAgentProfile(config, 'gemini').resumeCommand).toBeNull();
    expect(resolveAgentProfile(config, 'aider').resumeCommand).toBeNull();
    expect(resolveAgentProfile(config, 'mine').resumeCommand).toBeNull();
    expect(parseSagaConfigText('agents:\n  claude: { resume: "no" }\n', 'c.yaml')).toMatchObject({
      ok: false,
    });
  });

  test('an unknown profile is a clear error listing the known ones', () => {
    const config = parseOk('agents:\n  mine:\n    command: [my-agent]\n');
    expect(() => resolveAgentProfile(config, 'nope')).toThrow(
      "Unknown agent profile 'nope'. Known profiles: aider, claude, codex, demo, gemini, mine, opencode.",
    );
  });
});

describe('parseSagaConfigText errors', () => {
  test('name the file and the precise path', () => {
    const errors = parseErrors(`
agents:
  mine:
    command: ["my-agent", "{prompt}", "{bogus}"]
    timeout: 45 minutes
worktree:
  setup: [["npm", "ci"], []]
  copy: ["../outside"]
attempts: 0
`);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^saga\.config\.yaml: agents\.mine\.command\[2\]: unknown placeholder \{bogus\}/,
        ),
        expect.stringMatching(/^saga\.config\.yaml: agents\.mine\.timeout: Invalid duration '45 minutes'/),
        expect.stringMatching(/^saga\.config\.yaml: worktree\.setup\[1\]: needs at least the program to run/),
        expect.stringMatching(/^saga\.config\.yaml: worktree\.copy\[0\]: must be a relative path inside/),
        expect.stringMatching(/^saga\.config\.yaml: attempts: /),
      ]),
    );
    expect(errors).toHaveLength(5);
  });

  test('a profile that is not a preset needs a command', () => {
    expect(parseErrors('agents:\n  mine:\n    timeout: 5m\n')).toEqual([
      expect.stringMatching(
        /^saga\.config\.yaml: agents\.mine\.command: required: 'mine' is not a built-in preset/,
      ),
    ]);
  });

  test('default_agent must name a known profile', () => {
    expect(parseErrors('default_agent: ghost\n')).toEqual([
      expect.stringMatching(/default_agent: unknown agent profile 'ghost'; known: aider, claude/),
    ]);
  });

  test('unknown settings are named (typos do not pass silently)', () => {
    expect(parseErrors('atempts: 4\nagents:\n  claude:\n    comand: [x]\n')).toEqual(
      expect.arrayContaining([
        "saga.config.yaml: (top level): unknown setting 'atempts'",
        "saga.config.yaml: agents.claude: unknown setting 'comand'",
      ]),
    );
  });

  test('YAML syntax errors give the line', () => {
    const [error] = parseErrors('agents:\n  mine: [unclosed\n');
    expect(error).toMatch(/^saga\.config\.yaml: YAML syntax error at line \d+, column \d+: /);
  });

  test('a top level that is not a mapping is refused', () => {
    expect(parseErrors('- a\n- b\n')).toEqual([
      'saga.config.yaml: expected a mapping of settings at the top level.',
    ]);
  });

  test('formatPath renders array indexes in brackets', () => {
    expect(formatPath(['milestones', 0, 'tasks', 1, 'owns'])).toBe('milestones[0].tasks[1].owns');
  });
});

describe('expandCommand', () => {
  test('substitutes inside each argv element and never re-expands values', () => {
    const argv = expandCommand(['agent', '--task={task_id}', '{prompt}', '--cd', '{workdir}'], {
      task_id: '1.2',
      prompt: 'say {workdir} and $(rm -rf /)',
      workdir: '/tmp/w t',
    });
    expect(argv).toEqual(['agent', '--task=1.2', 'say {workdir} and $(rm -rf /)', '--cd', '/tmp/w t']);
  });

  test('a placeholder without a value is an error, unless asked to leave it', () => {
    expect(() => expandCommand(['x', '{prompt_file}'], {})).toThrow(/uses \{prompt_file\}, but no value/);
    expect(expandCommand(['{node}', '{prompt}'], { node: '/n' }, { leaveMissing: true })).toEqual([
      '/n',
      '{prompt}',
    ]);
  });
});

describe('loadSagaConfig', () => {
  let dir: string;
  let repo: string;
  let home: string;
  const machine = { sagaRoot: '/opt/saga', nodePath: '/usr/bin/node-x' };
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-config-'));
    repo = path.join(dir, 'repo');
    home = path.join(dir, 'home');
    await fs.mkdir(repo);
    await fs.mkdir(home);
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('defaults when neither file exists, with the demo preset resolved for this machine', async () => {
    const { config, source } = await loadSagaConfig({ repo, sagaHome: home }, machine);
    expect(source).toBeNull();
    expect(resolveAgentProfile(config, 'demo').command).toEqual([
      '/usr/bin/node-x',
      '/opt/saga/agents/demo-agent.js',
    ]);
    expect(resolveAgentProfile(config).command).toEqual(BUILTIN_AGENTS.claude.command);
  });

  test("the repo file's settings go over the saga home file's", async () => {
    await fs.writeFile(path.join(home, 'saga.config.yaml'), 'attempts: 5\ncheck_timeout: 3m\n');
    expect((await loadSagaConfig({ repo, sagaHome: home }, machine)).config.attempts).toBe(5);
    await fs.writeFile(path.join(repo, 'saga.config.yaml'), 'attempts: 7\n');
    const loaded = await loadSagaConfig({ repo, sagaHome: home }, machine);
    expect(loaded.config).toMatchObject({ attempts: 7, check_timeout: '3m' });
    expect(loaded.source).toBe(path.join(home, 'saga.config.yaml'));
    expect(loaded.repoSource).toBe(path.join(repo, 'saga.config.yaml'));
  });

  test("the repo file's commands are refused unless trusted, then reported", async () => {
    const file = path.join(repo, 'saga.config.yaml');
    await fs.writeFile(file, 'default_agent: mine\nagents:\n  mine:\n    command: ["node", "x.js"]\n');
    await expect(loadSagaConfig({ repo, sagaHome: home }, machine)).rejects.toThrow(
      `${file} sets what saga runs or what it reaches, and a repository's config is not trusted for that:\n` +
        '  - saga.config.yaml: agents.mine.command: set by the repository\n' +
        `Move these settings into your own ${path.join(home, 'saga.config.yaml')}`,
    );
    const told: string[] = [];
    const loaded = await loadSagaConfig(
      { repo, sagaHome: home, trustRepoConfig: true, onRepoWidening: (_f, s) => told.push(...s) },
      machine,
    );
    expect(resolveAgentProfile(loaded.config).command).toEqual(['node', 'x.js']);
    expect(told).toEqual(['agents.mine.command: ["node","x.js"]']);
    expect(loaded.repoWidening).toEqual(told);
  });

  test('a HOME of / is refused whatever file sets it', async () => {
    const file = path.join(home, 'saga.config.yaml');
    await fs.writeFile(file, 'agents:\n  mine:\n    command: ["x"]\n    env: { HOME: "/" }\n');
    await expect(loadSagaConfig({ repo, sagaHome: home }, machine)).rejects.toThrow(
      `Refused saga config (${file}):\n  - agents.mine.env.HOME: '/' is / (the whole host would be writable in the sandbox); refused`,
    );
  });

  test('user commands may use {saga_root}; other placeholders stay for run time', async () => {
    await fs.writeFile(
      path.join(home, 'saga.config.yaml'),
      'default_agent: mine\nagents:\n  mine:\n    command: ["{node}", "{saga_root}/x.js", "{prompt_file}"]\n',
    );
    const { config } = await loadSagaConfig({ repo, sagaHome: home }, machine);
    expect(resolveAgentProfile(config).command).toEqual([
      '/usr/bin/node-x',
      '/opt/saga/x.js',
      '{prompt_file}',
    ]);
  });

  test('a bad file is a clear error naming the file and the path inside it', async () => {
    const file = path.join(repo, 'saga.config.yaml');
    await fs.writeFile(file, 'agents:\n  claude:\n    timeout: soon\n');
    await expect(loadSagaConfig({ repo, sagaHome: home }, machine)).rejects.toThrow(
      `Invalid saga config ${file}:\n  - ${file}: agents.claude.timeout: Invalid duration 'soon'`,
    );
  });

  test('an explicit --config file must exist', async () => {
    await expect(
      loadSagaConfig({ repo, sagaHome: home, configFile: path.join(dir, 'missing.yaml') }, machine),
    ).rejects.toThrow(/Cannot read saga config .*missing\.yaml: file not found/);
  });

  test('the real saga root holds the demo agent', async () => {
    await expect(fs.stat(path.join(findSagaRoot(), 'agents', 'demo-agent.js'))).resolves.toBeTruthy();
  });
});
