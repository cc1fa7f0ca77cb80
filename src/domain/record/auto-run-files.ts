/**
 * Files in landed work that tools run on their own, without the user asking to run the repository's code:
 * entering the folder (direnv, mise), opening it in an editor, a git command, starting an agent CLI, installing
 * packages, pushing to CI, the next saga. Agents are untrusted, so acceptance names each one such file the
 * saga added or changed: the user reviews them before the work reaches the base branch. Build files the user
 * runs on purpose (a Makefile, a test) are not listed: running them is asking for them.
 */
import { oneTerminalLine } from '../text/terminal';

export interface AutoRunFile {
  path: string;
  /** What runs it. */
  runBy: string;
}

/** A pattern over the whole path (`/`-separated, from the repository's root), and what runs such a file. */
const RULES: { match: RegExp; runBy: string }[] = [
  { match: /(^|\/)\.envrc$/, runBy: 'direnv, on entering the folder' },
  {
    match: /(^|\/)\.?mise(\.[\w-]+)?\.toml$|(^|\/)\.mise\/config\.toml$/,
    runBy: 'mise, on entering the folder',
  },
  { match: /(^|\/)\.gitattributes$/, runBy: 'git (filters, diff drivers, LFS)' },
  { match: /(^|\/)\.lfsconfig$/, runBy: 'git LFS' },
  { match: /(^|\/)\.gitmodules$/, runBy: 'git (submodule URLs and update commands)' },
  { match: /^\.husky\//, runBy: 'git hooks (husky)' },
  { match: /^\.githooks\//, runBy: 'git hooks (core.hooksPath)' },
  {
    match: /^(\.pre-commit-config\.yaml|lefthook\.ya?ml|\.lefthook\.ya?ml)$/,
    runBy: 'git hooks (pre-commit, lefthook)',
  },
  {
    match: /^\.vscode\/(tasks|settings|launch)\.json$|\.code-workspace$/,
    runBy: 'VS Code, on opening the folder',
  },
  { match: /^\.devcontainer\//, runBy: 'dev containers (lifecycle commands)' },
  { match: /^\.idea\/(workspace|runConfigurations)/, runBy: 'JetBrains IDEs' },
  { match: /^\.claude\/settings(\.local)?\.json$/, runBy: 'Claude Code (hooks, permissions)' },
  { match: /^\.mcp\.json$|^\.cursor\/mcp\.json$/, runBy: 'agent CLIs (MCP servers)' },
  { match: /^\.codex\//, runBy: 'Codex CLI (project config)' },
  { match: /^\.gemini\/settings\.json$/, runBy: 'Gemini CLI (MCP servers, tools)' },
  { match: /^\.opencode\/|^opencode\.jsonc?$/, runBy: 'opencode (project config)' },
  {
    match: /^\.github\/workflows\/|^\.gitlab-ci\.yml$|^\.circleci\//,
    runBy: 'CI, with the repository’s secrets',
  },
  {
    match: /(^|\/)\.npmrc$|(^|\/)\.yarnrc(\.yml)?$|(^|\/)\.pnpmfile\.cjs$/,
    runBy: 'package managers, on install',
  },
  { match: /(^|\/)saga\.config\.ya?ml$/, runBy: 'saga (agent commands, sandbox, set-up)' },
  { match: /^\.sage\/config\.ya?ml$/, runBy: 'saga (flag defaults)' },
];

/** npm runs these on `npm install` (prepare also on `npm pack` and git dependencies). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare', 'prepublish'];

/** True when the path is a package.json: its install scripts are read separately (packageInstallScripts). */
export const isPackageJson = (file: string): boolean => /(^|\/)package\.json$/.test(file);

/** The install-time scripts a package.json declares (npm runs them on install), or none for what does not parse. */
export function packageInstallScripts(text: string): string[] {
  try {
    const parsed: unknown = JSON.parse(text);
    const scripts = (parsed as { scripts?: unknown } | null)?.scripts;
    if (!scripts || typeof scripts !== 'object') return [];
    return INSTALL_SCRIPTS.filter((name) => typeof (scripts as Record<string, unknown>)[name] === 'string');
  } catch {
    return [];
  }
}

/**
 * Of the paths landed work added or changed, those tools run on their own. `installScripts` gives, per
 * package.json among them, the install scripts it declares now (a package.json without any is not listed).
 */
export function autoRunFiles(paths: string[], installScripts: Record<string, string[]> = {}): AutoRunFile[] {
  const found: AutoRunFile[] = [];
  for (const file of paths) {
    const rule = RULES.find((r) => r.match.test(file));
    if (rule) found.push({ path: file, runBy: rule.runBy });
    else if (isPackageJson(file) && installScripts[file]?.length)
      found.push({ path: file, runBy: `npm, on install (scripts ${installScripts[file]!.join(', ')})` });
  }
  return found;
}

/** How many of them a prompt names before it says how many more there are (REPORT.md lists all). */
const PROMPT_MAX = 12;

/** One line for the acceptance prompt naming them, or '' when there are none. */
export function autoRunPromptLine(files: AutoRunFile[]): string {
  if (!files.length) return '';
  // A path is an agent's: no control character of it reaches a terminal showing the prompt.
  const named = files.slice(0, PROMPT_MAX).map((f) => `${oneTerminalLine(f.path)} (${f.runBy})`);
  const more = files.length > PROMPT_MAX ? `, and ${files.length - PROMPT_MAX} more` : '';
  return (
    `REVIEW FIRST: the work adds or changes files that tools run on their own: ${named.join('; ')}${more}. ` +
    `They run with your rights once you accept and check the work out, so read them before you accept.`
  );
}
