/**
 * The built-in agent presets: for each common coding-agent CLI, the headless command that lets it edit
 * files and run commands in its worktree (and nothing broader than that needs), how it takes its prompt,
 * which machine-readable output it prints, and what `saga doctor` checks about it. Each was run for real
 * against a local stand-in of its model API (test/integration/activities/agents/agent-clis.test.ts); flags were checked with the versions
 * in `verifiedVersions`. Pure data.
 */
import type { AgentProfile } from './config';

/** Output formats saga can read: usage, session id and failure diagnosis per CLI; `text` means none. */
export const AGENT_OUTPUT_FORMATS = ['text', 'claude', 'codex', 'gemini', 'opencode', 'aider'] as const;
export type AgentOutputFormat = (typeof AGENT_OUTPUT_FORMATS)[number];

/** Where a CLI that has no JSON on stdout writes its events, in the run folder (aider's analytics log). */
export const AGENT_EVENTS_FILE = 'agent-events.jsonl';
/** Beside each transcript: which profile ran and which output format it printed. */
export const AGENT_RUN_FILE = 'agent.json';

/**
 * How a CLI continues a recorded session: `args` (`{session}` is the id it printed) go in
 * front of the argument `before` when the command has it (Codex's stdin `-`), else at the end. Checked
 * with the versions in `verifiedVersions`.
 */
export interface ResumeArgs {
  args: string[];
  before?: string;
}

export interface AgentPreset {
  profile: AgentProfile;
  /** Absent: the CLI cannot resume a session from the command line (aider), so retries start fresh. */
  resume?: ResumeArgs;
  /**
   * Arguments that cap one run's spend (`{usd}`: what the task and saga budgets leave), added at the end of
   * the command. Absent: the CLI cannot be capped per run (README "Budgets").
   */
  budgetArgs?: string[];
  /** What the agent may do on the user's machine with this preset, and how to narrow it (README text). */
  permits: string;
  /**
   * The worker's variables this program reads (its keys, endpoints and own settings; `PREFIX*` patterns):
   * an agent gets these and the base allow-list of src/domain/config/agent-env.ts, never the whole environment.
   */
  passEnv: string[];
  /** host:port pairs of its model API, reachable from saga's sandbox. */
  network?: string[];
  /**
   * Its own state and caches under $HOME: inside saga's sandbox, a private copy per saga and profile
   * (sessions there resume across the saga's runs; nothing written there reaches the user's own CLI).
   */
  stateFiles?: string[];
  /**
   * Its config under $HOME (inside `stateFiles`), copied into that private copy when it is made: the
   * user's settings, MCP servers, hooks, plugins and instructions, which the CLI then runs confined.
   */
  configFiles?: string[];
  /** Variables naming files it writes (its own logs), writable inside saga's sandbox. */
  writableEnv?: string[];
  /**
   * Arguments replaced (or, with none to replace, added) when saga's sandbox confines it: a CLI's own
   * sandbox would nest namespaces inside saga's (Codex runs bwrap itself), so there it runs without its own.
   */
  insideSandbox?: { replace: string[]; with: string[] };
  /** For `saga doctor`; absent for saga's own demo agent. */
  cli?: {
    program: string;
    versionArgs: string[];
    /** Versions the preset's flags were checked with (a different one gets a warning, not a refusal). */
    verifiedVersions: string[];
    /** Any one of these environment variables (keys, or switches to another provider) counts as credentials. */
    credentialEnv: string[];
    /** Files under $HOME that a CLI login (or provider set-up) leaves behind. */
    loginFiles: string[];
    /** A CLI with many providers, configured in its own files: missing credentials are a warning only. */
    credentialsAdvisory?: boolean;
    install: string;
  };
}

export const AGENT_PRESETS: Readonly<Record<string, AgentPreset>> = {
  claude: {
    profile: {
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
      prompt_input: 'stdin',
      output: 'claude',
      subagent_dispatch: true,
      // A CLI that updates itself mid-saga would change under the running fleet.
      env: { DISABLE_AUTOUPDATER: '1' },
    },
    resume: { args: ['--resume', '{session}'] },
    // The CLI checks it between turns, so a run can overshoot the cap by one turn.
    budgetArgs: ['--max-budget-usd', '{usd}'],
    passEnv: ['ANTHROPIC_*', 'CLAUDE_CODE_*', 'CLAUDE_CONFIG_DIR', 'DISABLE_AUTOUPDATER'],
    network: ['api.anthropic.com:443'],
    stateFiles: ['.claude', '.claude.json'],
    configFiles: [
      '.claude/settings.json',
      '.claude/CLAUDE.md',
      '.claude/agents',
      '.claude/commands',
      '.claude/skills',
      '.claude/hooks',
      '.claude/plugins',
      '.claude/output-styles',
    ],
    permits:
      'edits files in its worktree (acceptEdits) and runs any shell command (Bash allowed) as your user; ' +
      "no permission bypass, so it also works as root. Narrow it with e.g. `--allowedTools 'Bash(npm test:*)'`.",
    cli: {
      program: 'claude',
      versionArgs: ['--version'],
      verifiedVersions: ['2.1.328'],
      credentialEnv: [
        'ANTHROPIC_API_KEY',
        'ANTHROPIC_AUTH_TOKEN',
        'CLAUDE_CODE_OAUTH_TOKEN',
        'CLAUDE_CODE_USE_BEDROCK',
        'CLAUDE_CODE_USE_VERTEX',
      ],
      loginFiles: ['.claude/.credentials.json'],
      install: 'npm install -g @anthropic-ai/claude-code',
    },
  },
  codex: {
    profile: {
      command: ['codex', 'exec', '--json', '--sandbox', 'workspace-write', '--skip-git-repo-check', '-'],
      prompt_input: 'stdin',
      output: 'codex',
    },
    // `codex exec [OPTIONS] resume ID -`: the exec options stay in front, the prompt still comes on stdin.
    resume: { args: ['resume', '{session}'], before: '-' },
    passEnv: ['OPENAI_*', 'CODEX_*'],
    network: ['api.openai.com:443', 'chatgpt.com:443'],
    stateFiles: ['.codex'],
    // Its config.toml (providers, MCP servers, notify) is among its login files: read-only, as the user has it.
    configFiles: ['.codex/AGENTS.md', '.codex/prompts', '.codex/rules', '.codex/skills'],
    insideSandbox: {
      replace: ['--sandbox', 'workspace-write'],
      with: ['--dangerously-bypass-approvals-and-sandbox'],
    },
    permits:
      "edits and runs commands in its worktree; inside saga's sandbox without Codex's own (namespaces do not " +
      "nest), else in Codex's workspace-write sandbox; saga, not the agent, makes the commit. Narrow it with " +
      '`--sandbox read-only`.',
    cli: {
      program: 'codex',
      versionArgs: ['--version'],
      verifiedVersions: ['0.169.0'],
      credentialEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
      loginFiles: ['.codex/auth.json', '.codex/config.toml'],
      install: 'npm install -g @openai/codex',
    },
  },
  gemini: {
    profile: {
      command: [
        'gemini',
        '--output-format',
        'stream-json',
        '--approval-mode',
        'auto_edit',
        '--allowed-tools',
        'run_shell_command',
        '--skip-trust',
      ],
      prompt_input: 'stdin',
      output: 'gemini',
      env: { GEMINI_CLI_NO_RELAUNCH: 'true' },
    },
    // 0.61 takes a session UUID (besides `latest` and an index, which could pick another run's session).
    resume: { args: ['--resume', '{session}'] },
    passEnv: ['GEMINI_*', 'GOOGLE_*'],
    network: [
      'generativelanguage.googleapis.com:443',
      'cloudcode-pa.googleapis.com:443',
      'oauth2.googleapis.com:443',
    ],
    stateFiles: ['.gemini'],
    configFiles: ['.gemini/settings.json', '.gemini/GEMINI.md', '.gemini/extensions', '.gemini/commands'],
    permits:
      'edits files (auto_edit) and runs shell commands (run_shell_command allowed) in its worktree as your user. ' +
      'Narrow it with `--allowed-tools "run_shell_command(npm test)"`.',
    cli: {
      program: 'gemini',
      versionArgs: ['--version'],
      verifiedVersions: ['0.61.0'],
      credentialEnv: [
        'GEMINI_API_KEY',
        'GOOGLE_API_KEY',
        'GOOGLE_APPLICATION_CREDENTIALS',
        'GOOGLE_GENAI_USE_VERTEXAI',
      ],
      loginFiles: ['.gemini/oauth_creds.json'],
      install: 'npm install -g @google/gemini-cli',
    },
  },
  opencode: {
    profile: {
      command: ['opencode', 'run', '--format', 'json'],
      prompt_input: 'stdin',
      output: 'opencode',
      env: { OPENCODE_DISABLE_AUTOUPDATE: '1' },
    },
    resume: { args: ['--session', '{session}'] },
    passEnv: ['OPENCODE_*', 'ANTHROPIC_*', 'OPENAI_*', 'GEMINI_*', 'GOOGLE_*', 'OPENROUTER_*'],
    network: [
      'api.anthropic.com:443',
      'api.openai.com:443',
      'openrouter.ai:443',
      'models.dev:443',
      'opencode.ai:443',
    ],
    stateFiles: ['.local/share/opencode', '.config/opencode', '.cache/opencode', '.local/state/opencode'],
    // Its whole config folder: with the plugin package it installs there, so it is not fetched again.
    configFiles: ['.config/opencode'],
    permits:
      "edits files and runs shell commands in its worktree as your user (opencode's default permissions). " +
      'Narrow it with a `permission` block in opencode.json.',
    cli: {
      program: 'opencode',
      versionArgs: ['--version'],
      verifiedVersions: ['1.18.33'],
      credentialEnv: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'OPENROUTER_API_KEY'],
      loginFiles: ['.local/share/opencode/auth.json', '.config/opencode/opencode.json'],
      credentialsAdvisory: true,
      install: 'npm install -g opencode-ai',
    },
  },
  aider: {
    profile: {
      command: [
        'aider',
        '--message-file',
        '{prompt_file}',
        '--yes-always',
        '--no-auto-commits',
        '--no-gitignore',
        '--edit-format',
        'diff',
        '--map-tokens',
        '0',
        '--no-show-model-warnings',
        '--no-check-update',
        '--no-analytics',
        // Its token and cost figures (written even with --no-analytics) and its histories go to the run
        // folder, never into the worktree where they would be committed.
        '--analytics-log',
        `{run_dir}/${AGENT_EVENTS_FILE}`,
        '--chat-history-file',
        '{run_dir}/aider-chat.md',
        '--input-history-file',
        '{run_dir}/aider-input.txt',
      ],
      output: 'aider',
    },
    passEnv: ['AIDER_*', 'ANTHROPIC_*', 'OPENAI_*', 'GEMINI_*', 'OPENROUTER_*'],
    network: ['api.anthropic.com:443', 'api.openai.com:443', 'openrouter.ai:443'],
    stateFiles: ['.aider'],
    configFiles: ['.aider/caches'],
    // It `git add`s the files it creates; confined, the repository's index is read-only (saga commits).
    insideSandbox: { replace: [], with: ['--no-git'] },
    permits:
      'edits files in its worktree; never runs shell commands (`--yes-always` answers no to them): the ' +
      "task's checks are run by saga and their failures fed back. Narrow it with `--read FILE`.",
    cli: {
      program: 'aider',
      versionArgs: ['--version'],
      verifiedVersions: ['0.86.2'],
      credentialEnv: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'OPENROUTER_API_KEY'],
      loginFiles: ['.aider.conf.yml', '.env'],
      credentialsAdvisory: true,
      install: 'python3 -m pip install aider-chat',
    },
  },
  // The deterministic demo agent shipped with saga, run with the worker's own node.
  demo: {
    profile: { command: ['{node}', '{saga_root}/agents/demo-agent.js'], subagent_dispatch: true },
    permits: "saga's own scripted agent: writes the files its task owns; no model, no network.",
    passEnv: ['SAGA_DEMO_*'],
    writableEnv: ['SAGA_DEMO_LOG'],
  },
};
