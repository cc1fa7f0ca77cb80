/**
 * The saga's private home, as the sandbox layout works it out from a fake user home: the CLI's state a
 * private copy (its config copied in once, its login read-only over it), package caches per saga (or
 * scratch without a saga), other CLIs' state and logins hidden, a profile's own HOME as before.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RunAgentInputSchema } from '../../../../src/activities/agents/input';
import { agentSandbox } from '../../../../src/activities/agents/run-setup';
import { layoutFor, privateHomeOf, type ConfineRequest } from '../../../../src/activities/sandbox/layout';
import { parseSagaConfigText } from '../../../../src/domain/config/config-text';
import { resolveAgentProfile } from '../../../../src/domain/config/profile-resolution';
import { AGENT_PRESETS } from '../../../../src/domain/config/agent-presets';
import { bwrapArguments } from '../../../../src/activities/sandbox/bwrap-args';

const root = mkdtempSync(path.join(os.tmpdir(), 'saga-private-home-'));
const home = path.join(root, 'user');
const sagaHome = path.join(root, 'sagas');
const sagaDir = path.join(sagaHome, 's');
const privateHome = privateHomeOf(sagaDir);
const worktree = path.join(root, 'wt');
const savedHome = process.env.HOME;

const USER_FILES: Record<string, string> = {
  '.claude/settings.json': '{"hooks":{}}',
  '.claude/.credentials.json': '{"token":"t"}',
  '.claude/projects/p/old.jsonl': 'history',
  '.claude.json': '{"mcpServers":{}}',
  '.codex/auth.json': '{"key":"k"}',
  '.codex/config.toml': 'model = "m"',
  '.npm/_npx/x': 'x',
  '.cache/tool/data': 'd',
  '.env': 'AIDER_KEY=1',
};

beforeAll(() => {
  for (const [file, content] of Object.entries(USER_FILES)) {
    mkdirSync(path.dirname(path.join(home, file)), { recursive: true });
    writeFileSync(path.join(home, file), content);
  }
  mkdirSync(worktree, { recursive: true });
  process.env.HOME = home;
});
afterAll(() => {
  process.env.HOME = savedHome;
  rmSync(root, { recursive: true, force: true });
});

const at = (rel: string) => path.join(home, rel);
const claude = AGENT_PRESETS.claude!;
const claudeRun = (env: Record<string, string> = { HOME: home }): ConfineRequest => ({
  mode: 'auto',
  argv: ['/bin/true'],
  cwd: worktree,
  env,
  sagaHome,
  privateHome,
  stateKey: 'claude',
  stateFiles: claude.stateFiles!,
  configFiles: claude.configFiles!,
  loginFiles: claude.cli!.loginFiles,
});

test("a claude run: its state the saga's copy, its login read-only, caches per saga, other CLIs hidden", async () => {
  const layout = await layoutFor(claudeRun(), '/bin/true');
  const state = path.join(privateHome, 'agents', 'claude');
  expect(layout.writable).toEqual([]);
  expect(layout.binds).toEqual([
    { source: path.join(privateHome, 'caches', '.npm'), dest: at('.npm'), readOnly: false },
    { source: path.join(privateHome, 'caches', '.cache'), dest: at('.cache'), readOnly: false },
    { source: path.join(state, '.claude'), dest: at('.claude'), readOnly: false },
    { source: path.join(state, '.claude.json'), dest: at('.claude.json'), readOnly: false },
    { source: at('.claude/.credentials.json'), dest: at('.claude/.credentials.json'), readOnly: true },
  ]);
  // The user's config came along; their history did not; the caches start empty.
  expect(readFileSync(path.join(state, '.claude', 'settings.json'), 'utf8')).toBe('{"hooks":{}}');
  expect(readFileSync(path.join(state, '.claude.json'), 'utf8')).toBe('{"mcpServers":{}}');
  expect(existsSync(path.join(state, '.claude', 'projects'))).toBe(false);
  expect(existsSync(path.join(privateHome, 'caches', '.npm', '_npx'))).toBe(false);
  expect(layout.hiddenDirs).toEqual(expect.arrayContaining([at('.codex')]));
  expect(layout.hiddenFiles).toEqual(expect.arrayContaining([at('.env')]));
  expect([...layout.hiddenDirs, ...layout.hiddenFiles].filter((p) => p.includes('.claude'))).toEqual([]);

  // Copied once: the saga keeps its own from then on, whatever the user's becomes.
  writeFileSync(path.join(state, '.claude', 'settings.json'), '{"saga":true}');
  writeFileSync(at('.claude/settings.json'), '{"user":"changed"}');
  await layoutFor(claudeRun(), '/bin/true');
  expect(readFileSync(path.join(state, '.claude', 'settings.json'), 'utf8')).toBe('{"saga":true}');
  writeFileSync(at('.claude/settings.json'), USER_FILES['.claude/settings.json']!);

  // Bubblewrap: the private copies go over the user's paths, the login over the copy, hidden ones last.
  const args = bwrapArguments(layout, ['/bin/true'], true);
  const index = (flag: string, src: string, dest = src) =>
    args.findIndex(
      (a, i) => a === flag && args[i + 1] === src && (flag === '--tmpfs' || args[i + 2] === dest),
    );
  const stateBind = index('--bind', path.join(state, '.claude'), at('.claude'));
  expect(stateBind).toBeGreaterThan(index('--bind', worktree));
  expect(index('--ro-bind', at('.claude/.credentials.json'))).toBeGreaterThan(stateBind);
  expect(index('--tmpfs', at('.codex'))).toBeGreaterThan(stateBind);
});

test('a check with no saga: scratch caches, every CLI state and login hidden', async () => {
  const layout = await layoutFor(
    { mode: 'auto', argv: ['/bin/true'], cwd: worktree, env: { HOME: home }, sagaHome },
    '/bin/true',
  );
  expect(layout.binds).toEqual([]);
  expect(layout.scratch).toEqual([at('.npm'), at('.cache')]);
  expect(layout.hiddenDirs).toEqual(expect.arrayContaining([at('.claude'), at('.codex')]));
  expect(layout.hiddenFiles).toEqual(expect.arrayContaining([at('.claude.json'), at('.env')]));
  expect(layout.writable).toEqual([]);
});

test("a profile's own HOME stays all writable; the user's CLI state and logins are hidden", async () => {
  const own = path.join(root, 'agent-home');
  const layout = await layoutFor(claudeRun({ HOME: own }), '/bin/true');
  expect(layout.writable).toEqual([own]);
  expect(layout.binds).toEqual([]);
  expect(layout.hiddenDirs).toEqual(expect.arrayContaining([at('.claude'), at('.codex')]));
  expect(layout.hiddenFiles).toEqual(expect.arrayContaining([at('.claude.json')]));
});

test("a profile of its own name that runs a preset's CLI keeps that CLI's state handling", () => {
  const config = parseSagaConfigText(
    'agents:\n  claude-opus: { command: [claude, -p, --model, opus] }\n  mine: { command: [node, a.js] }\n',
    'saga.config.yaml',
  );
  if (!config.ok) throw new Error(config.errors.join('\n'));
  const sandboxOf = (name: string) => {
    const input = RunAgentInputSchema.parse({
      sagaName: 's',
      sagaDir,
      role: 'implementer',
      stage: 'task',
      taskId: '1.1',
      attempt: 1,
      profile: resolveAgentProfile(config.config, name),
      prompt: 'p',
      workdir: worktree,
      runLabel: 'a1',
    });
    const runDir = path.join(sagaDir, 'runs', 'a1');
    const files = {
      runDir,
      promptPath: path.join(runDir, 'prompt.md'),
      resumePromptPath: path.join(runDir, 'resume-prompt.md'),
      reportPath: path.join(runDir, 'report.json'),
      transcriptPath: path.join(runDir, 'transcript.log'),
      pidPath: path.join(runDir, 'agent.pid'),
      promptText: 'p',
    };
    const machine = { nodePath: process.execPath, sagaRoot: root };
    return agentSandbox(input, machine, files, { argv: ['x'], env: {}, resumeId: null });
  };
  expect(sandboxOf('claude-opus')).toMatchObject({
    privateHome,
    stateKey: 'claude-opus',
    stateFiles: claude.stateFiles,
    loginFiles: claude.cli!.loginFiles,
  });
  expect(sandboxOf('mine')).toMatchObject({ stateKey: 'mine', stateFiles: [], loginFiles: [] });
});

test("config kept as links (dotfiles) is copied as content, never as a link into the user's files", async () => {
  const user = path.join(root, 'linked-user');
  const dotfiles = path.join(root, 'dotfiles');
  mkdirSync(path.join(user, '.claude'), { recursive: true });
  mkdirSync(dotfiles, { recursive: true });
  writeFileSync(path.join(dotfiles, 'settings.json'), '{"linked":true}');
  symlinkSync(path.join(dotfiles, 'settings.json'), path.join(user, '.claude', 'settings.json'));
  process.env.HOME = user;
  try {
    const own = privateHomeOf(path.join(sagaHome, 'linked'));
    await layoutFor({ ...claudeRun({ HOME: user }), privateHome: own }, '/bin/true');
    const copy = path.join(own, 'agents', 'claude', '.claude', 'settings.json');
    expect(lstatSync(copy).isSymbolicLink()).toBe(false);
    expect(readFileSync(copy, 'utf8')).toBe('{"linked":true}');
  } finally {
    process.env.HOME = home;
  }
});
