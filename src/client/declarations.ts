/**
 * Every `saga` command, argument and option, declared once (README "Real use"). The parser (args.ts), `--help`,
 * shell completion (completion.ts) and the README check (test/integration/client/cli-help.test.ts) are generated from
 * it, and each command's `load` imports its handler only when that command runs: reading the table loads no
 * command module, so `saga flags ...` does not pay for the Temporal client nor `saga status` for the worker.
 */
import { declAt, type ArgDecl, type CommandDecl, type OptionDecl, type TopCommandDecl } from './command-decl';
import { BOARD_AND_CODEC_DECLS, DEV_AND_WORKER_DECLS } from './server-declarations';

export type { ArgDecl, CommandDecl, CommandHandler, OptionDecl, TopCommandDecl } from './command-decl';
export { usageLine } from './command-decl';

const NAME: ArgDecl = { name: 'NAME' };
const JSON_OPTION: OptionDecl = { name: 'json', description: 'machine-readable output (stable, documented)' };
const DELIVER_OPTION: OptionDecl = {
  name: 'deliver',
  description: "deliver as pull requests on the config's forge, even with delivery: local",
};

export const COMMAND_DECLS: readonly TopCommandDecl[] = [
  ...DEV_AND_WORKER_DECLS,
  {
    name: 'start',
    load: async () => (await import('./commands/start')).startCommand,
    summary: 'start a saga on a repository',
    args: [{ name: 'ARGUMENTS', optional: true, variadic: true }],
    options: [
      { name: 'repo', value: 'PATH', required: true, description: 'the git repository to work on' },
      { name: 'plan', value: 'FILE', description: 'use this plan instead of planning' },
      { name: 'agent', value: 'PROFILE', description: 'agent profile for the tasks' },
      { name: 'config', value: 'FILE', description: 'saga config file' },
      { name: 'name', value: 'SLUG', description: 'name of the saga (default: from the feature text)' },
      { name: 'base', value: 'BRANCH', description: 'branch to start from (default: the current one)' },
      { name: 'wait', description: 'follow the saga until it ends' },
      { name: 'allow-dirty', description: 'start even if the repository has uncommitted changes' },
      { name: 'skip-agent-check', description: 'do not check the agent CLI before starting' },
      {
        name: 'trust-repo-config',
        description: "let the repository's saga.config.yaml set commands, sandbox, network, env and delivery",
      },
      DELIVER_OPTION,
      {
        name: 'from',
        value: 'REF',
        description: 'start from an issue: github:OWNER/REPO#N, gitea:OWNER/REPO#N or linear:TEAM-N',
      },
    ],
    notes:
      'ARGUMENTS is the slash-command text, best given after --, e.g.\n' +
      '  saga start --repo ~/src/app -- "--autonomous --parallel=3 Ship dark mode"\n' +
      "With no goal (and no --plan) it picks up the repository's unfinished saga, as saga continue would.\n" +
      'With --from the issue is the request (untrusted text) and its title the goal unless one is typed.',
  },
  {
    name: 'watch',
    load: async () => (await import('./commands/watch')).watchCommand,
    summary: 'start a saga per newly labelled issue of a tracker',
    args: [{ name: 'ARGUMENTS', optional: true, variadic: true }],
    options: [
      {
        name: 'from',
        value: 'SCOPE',
        required: true,
        description: 'the issues to watch: github:OWNER/REPO, gitea:OWNER/REPO or linear:TEAM',
      },
      { name: 'label', value: 'LABEL', required: true, description: 'the label that starts a saga' },
      { name: 'repo', value: 'PATH', description: 'the git repository the sagas work on (to start a watch)' },
      { name: 'max', value: 'N', description: 'sagas running at once, at most (default: intake.max_sagas)' },
      {
        name: 'poll',
        value: 'SECONDS',
        description: 'how often the tracker is asked (default: intake.poll_seconds)',
      },
      { name: 'agent', value: 'PROFILE', description: 'agent profile for the tasks' },
      { name: 'config', value: 'FILE', description: 'saga config file' },
      { name: 'base', value: 'BRANCH', description: 'branch to start from (default: the current one)' },
      { name: 'allow-dirty', description: 'start even if the repository has uncommitted changes' },
      { name: 'skip-agent-check', description: 'do not check the agent CLI before starting' },
      {
        name: 'trust-repo-config',
        description: "let the repository's saga.config.yaml set commands, sandbox, network, env and delivery",
      },
      DELIVER_OPTION,
      { name: 'stop', description: 'stop the watch (the sagas it started go on)' },
      { name: 'status', description: 'what the watch started, runs and waits for' },
      JSON_OPTION,
    ],
    notes:
      'ARGUMENTS are flags only, given to every saga, e.g.\n' +
      '  saga watch --repo ~/src/app --from gitea:acme/app --label saga -- "--parallel=2"\n' +
      "Each saga's name comes from its issue, so an issue gets one saga however often the watch restarts.",
  },
  {
    name: 'status',
    load: async () => (await import('./commands/inspect')).statusCommand,
    summary: 'phase, tasks and what the saga waits for',
    args: [NAME],
    options: [JSON_OPTION, { name: 'watch', description: 'follow the saga, redrawing on change' }],
  },
  {
    name: 'list',
    summary: 'list sagas',
    options: [JSON_OPTION],
    load: async () => (await import('./commands/inspect')).listCommand,
  },
  {
    name: 'respond',
    load: async () => (await import('./commands/interact')).respondCommand,
    summary: 'answer a pending interaction (by number, option text or [X] key)',
    args: [NAME, { name: 'INTERACTION_ID' }, { name: 'CHOICE' }],
    options: [{ name: 'text', value: 'TEXT', description: 'free text sent with the choice' }],
  },
  {
    name: 'approve',
    summary: 'approve the plan',
    args: [NAME],
    load: async () => (await import('./commands/interact')).approveCommand,
  },
  {
    name: 'revise',
    load: async () => (await import('./commands/interact')).reviseCommand,
    summary: 'ask the planner to revise the plan',
    args: [NAME],
    options: [{ name: 'note', value: 'TEXT', required: true, description: 'what should change in the plan' }],
  },
  {
    name: 'accept',
    load: async () => (await import('./commands/interact')).acceptCommand,
    summary: 'accept the delivered feature',
    args: [NAME],
    options: [
      { name: 'fast-forward', description: 'also fast-forward the base branch' },
      {
        name: 'merge',
        description: 'delivery: pr — merge the pull requests in order through the forge',
      },
      {
        name: 'ready',
        description: 'delivery: pr — mark the draft pull requests ready for review (asked again)',
      },
    ],
  },
  {
    name: 'report',
    load: async () => (await import('./commands/interact')).reportCommand,
    summary: 'report issues found in acceptance: a focused round',
    args: [NAME],
    options: [
      {
        name: 'issue',
        value: 'TEXT',
        repeatable: true,
        required: true,
        description: 'one issue (repeatable); "TEXT :: check: COMMAND" adds its check',
      },
    ],
  },
  {
    name: 'continue',
    load: async () => (await import('./commands/continue')).continueCommand,
    runtime: true,
    summary: 'after a crash: replay history, resume failed/terminated runs',
    args: [{ name: 'NAME', optional: true }],
    options: [
      { name: 'detach', description: 'return once resumed instead of following the saga' },
      {
        name: 'lost-merges',
        value: 'redo|leave',
        description: 'tasks recorded as integrated that the integration branch lost: merge again, or leave',
      },
    ],
  },
  {
    name: 'cancel',
    summary: 'stop agents, commit their work, remove worktrees',
    args: [NAME],
    load: async () => (await import('./commands/interact')).cancelCommand,
  },
  {
    name: 'cleanup',
    load: async () => (await import('./commands/cleanup')).cleanupCommand,
    summary: 'remove leftover worktrees of crashed runs',
    args: [NAME],
    options: [
      { name: 'repo', value: 'PATH', description: 'the repository (default: the one the saga ran on)' },
      { name: 'force', description: 'also remove worktrees with uncommitted work' },
    ],
  },
  {
    name: 'logs',
    load: async () => (await import('./commands/inspect')).logsCommand,
    summary: "an agent's transcript as readable lines",
    args: [NAME, { name: 'TASK_ID' }],
    options: [
      { name: 'follow', description: 'keep printing new lines' },
      { name: 'raw', description: "the agent CLI's own output, unformatted" },
    ],
  },
  {
    name: 'flags',
    // Its own grammar: the handler is given every word after `flags` (runCli parses only its help).
    load: async () => {
      const { flagsCommand } = await import('./commands/flags');
      return (args, io) => flagsCommand(args.positionals, io);
    },
    summary: 'the slash-command flag parser and review checks',
    ownGrammar: true,
    subcommands: [
      {
        name: 'parse',
        summary: 'parse slash-command text; prints the flags JSON',
        args: [{ name: 'ARGUMENTS', variadic: true, optional: true }],
        options: [{ name: 'config-path', value: 'PATH', description: 'sage config with flag defaults' }],
      },
      {
        name: 'classify',
        summary: 'classify a review output',
        options: [{ name: 'review-output', value: 'TEXT', required: true, description: 'the review text' }],
      },
      {
        name: 'check',
        summary: 'the quality decision for a review iteration',
        options: [
          { name: 'review-output', value: 'TEXT', required: true, description: 'the review text' },
          { name: 'iteration', value: 'N', required: true, description: 'iteration number' },
          { name: 'history-json', value: 'JSON', description: 'earlier iterations' },
        ],
      },
    ],
  },
  {
    name: 'chat',
    load: async () => (await import('./commands/chat')).chatCommand,
    summary: 'chat bridge (Slack + generic signed webhook)',
    subcommands: [
      {
        name: 'serve',
        summary: 'run the chat bridge',
        notes:
          'Configured by SAGA_CHAT_PORT, SAGA_APPROVERS, SLACK_*, SAGA_WEBHOOK_CALLERS or SAGA_WEBHOOK_SECRET\n' +
          'with SAGA_WEBHOOK_USER, SAGA_NOTIFY_URL with SAGA_NOTIFY_SECRET.',
      },
    ],
  },
  ...BOARD_AND_CODEC_DECLS,
  {
    name: 'mcp',
    load: async () => (await import('./commands/mcp')).mcpCommand,
    summary: 'MCP server over stdio, for the agents and IDEs you run (list, start, answer sagas)',
    options: [
      { name: 'user', value: 'NAME', description: 'answers are recorded as mcp:NAME (default $USER)' },
    ],
    notes: 'e.g. claude mcp add saga -- /path/to/bin/saga mcp (README "Use it from your agent or IDE (MCP)")',
  },
  {
    name: 'demo',
    summary: 'full saga on a generated sample repo, no API keys needed',
    load: async () => (await import('./commands/demo')).demoCommand,
    runtime: true,
  },
  {
    name: 'doctor',
    load: async () => (await import('./commands/doctor')).doctorCommand,
    summary: 'check git, server, saga home, the forge, the trackers and agent CLIs',
    options: [
      { name: 'repo', value: 'PATH', description: 'also check this repository' },
      { name: 'config', value: 'FILE', description: 'saga config file' },
      { name: 'agent', value: 'NAME', description: 'check this agent CLI (installed, version, credentials)' },
      { name: 'probe', description: 'run one tiny real task with --agent' },
      JSON_OPTION,
    ],
  },
  {
    name: 'completion',
    // The completion scripts are generated from this table, handed to the command so it imports no table.
    load: async () => {
      const { completionCommand } = await import('./completion');
      return (args, io) => completionCommand(COMMAND_DECLS, args, io);
    },
    summary: 'print a shell completion script',
    args: [{ name: 'SHELL', choices: ['bash', 'zsh'] }],
    notes: 'e.g. source <(saga completion bash)',
  },
];

/** The declaration of `saga <path>`, e.g. `status` or `chat serve`. */
export function findDecl(path: string): CommandDecl | undefined {
  return declAt(COMMAND_DECLS, path);
}
