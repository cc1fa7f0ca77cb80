/**
 * What environment the processes saga starts for a saga get: agents, checks, worktree setup commands and
 * discovery commands. Never the worker's whole environment: the worker holds credentials an agent must not
 * reach (Temporal client keys, Slack and webhook secrets, approvers), so each process gets an allow-list
 * plus what saga sets for it. Also the `${VAR}` references agent profiles use for secrets (resolved in the
 * activity, so a secret's text never enters workflow history). Pure.
 */
import { AGENT_PRESETS } from './agent-presets';

export type EnvValues = Record<string, string>;
type SourceEnv = Readonly<Record<string, string | undefined>>;

/**
 * What any process needs to run tools at all: where programs and home are, who the user is, locale, time
 * zone, temp dir, proxies and CA bundles, toolchain locations, and the display (for computer use).
 * Names ending in `*` are prefixes.
 */
export const BASE_ENV_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TZ',
  'TMPDIR',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_STATE_HOME',
  'XDG_RUNTIME_DIR',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'JAVA_HOME',
  'GOPATH',
  'GOROOT',
  'GOCACHE',
  'GOMODCACHE',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'NVM_DIR',
  'VIRTUAL_ENV',
  'PYENV_ROOT',
];

/** An environment variable name as a shell spells it. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Names whose values are treated as secrets in saga.config.yaml (kept out of workflow history). */
export const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD/i;

/**
 * The worker's own credentials and approval channel: never given to an agent, a check or a setup command,
 * whatever a profile asks for. With them an agent could answer its own approval gates.
 */
export function isWorkerSecret(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    /^(TEMPORAL|SLACK)_/.test(upper) ||
    // The payload codec's key (SAGA_CODEC_KEY, _KEY_FILE, _OLD_KEYS): an agent must not read histories.
    /^SAGA_(WEBHOOK|NOTIFY|CHAT|APPROVERS|CALLER|CODEC)/.test(upper) ||
    (upper.startsWith('SAGA_') && SECRET_NAME.test(upper))
  );
}

function matches(name: string, pattern: string): boolean {
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern;
}

/** The variables of `source` named by `patterns` (exact names or `PREFIX*`), worker secrets left out. */
export function pickEnv(source: SourceEnv, patterns: readonly string[]): EnvValues {
  const picked: EnvValues = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || isWorkerSecret(name)) continue;
    if (patterns.some((pattern) => matches(name, pattern))) picked[name] = value;
  }
  return picked;
}

/**
 * The environment of a check, a worktree setup command or a discovery command: the base allow-list from
 * the worker's environment, the variables saga.config.yaml `pass_env` names, and what saga sets for it (e.g.
 * SAGA_PORT_BASE).
 */
export function commandEnvironment(
  workerEnv: SourceEnv,
  sagaSet: EnvValues = {},
  passEnv: readonly string[] = [],
): EnvValues {
  const passed = passEnv.filter((name) => !isWorkerSecret(name));
  return { ...pickEnv(workerEnv, BASE_ENV_NAMES), ...pickEnv(workerEnv, passed), ...sagaSet };
}

/** What the agent environment needs to know about a profile (a ResolvedAgentProfile fits). */
export interface AgentEnvProfile {
  name: string;
  command: readonly string[];
  env: EnvValues;
  passEnv?: readonly string[];
}

/**
 * The worker variables a profile's CLI reads: its keys and its own settings, from the preset of the same
 * name or whose program the command runs (a user profile `mine: { command: [claude, …] }` counts too).
 */
export function cliEnvNames(profile: Pick<AgentEnvProfile, 'name' | 'command'>): string[] {
  const program = (profile.command[0] ?? '').split('/').pop();
  const names = new Set<string>();
  for (const [name, preset] of Object.entries(AGENT_PRESETS)) {
    if (name !== profile.name && (!preset.cli || preset.cli.program !== program)) continue;
    for (const variable of [...preset.passEnv, ...(preset.cli?.credentialEnv ?? [])]) names.add(variable);
  }
  return [...names];
}

/**
 * An agent's environment: the base allow-list, its CLI's own variables, the profile's `pass_env` names
 * (all from the worker's environment, worker secrets never), then the profile's `env` with its `${VAR}`
 * references resolved, then what saga sets (SAGA_* and the task's ports), which nothing overrides.
 * Throws a non-retryable failure naming a reference whose variable the worker does not have.
 */
export function agentEnvironment(
  workerEnv: SourceEnv,
  profile: AgentEnvProfile,
  sagaSet: EnvValues,
): EnvValues {
  const passed = pickEnv(workerEnv, [...BASE_ENV_NAMES, ...cliEnvNames(profile), ...(profile.passEnv ?? [])]);
  const own = Object.fromEntries(
    Object.entries(resolveEnvReferences(profile.env, workerEnv, `agent profile '${profile.name}'`)).filter(
      ([name]) => !isWorkerSecret(name),
    ),
  );
  return { ...passed, ...own, ...sagaSet };
}

const REFERENCE = /\$\{([^}]*)\}/g;

/**
 * Problems with one `env` entry of a profile in saga.config.yaml, or [] when it is fine: malformed or
 * worker-secret references, a worker-secret name, a secret-looking name holding a literal (those are
 * accepted but moved out of history, see `CONFIG_SECRET_REFERENCE`). Only the first two are errors.
 */
export function envEntryProblems(name: string, value: string): string[] {
  const problems: string[] = [];
  if (isWorkerSecret(name)) {
    problems.push(`${name} is one of the worker's own secrets and is never given to an agent`);
  }
  for (const [whole, inner] of value.matchAll(REFERENCE)) {
    if (!ENV_NAME.test(inner)) {
      problems.push(`${whole} is not a reference: write \${NAME} with a variable name (letters, digits, _)`);
    } else if (isWorkerSecret(inner)) {
      problems.push(`${whole} names one of the worker's own secrets, which is never given to an agent`);
    }
  }
  return problems;
}

/**
 * Stands in, inside workflow history, for a secret-looking literal of saga.config.yaml: the activity reads
 * the value again from the profile's config file under the same name. Not a valid user reference (the
 * colon), so no one writes it by accident.
 */
export const CONFIG_SECRET_REFERENCE = '${saga.config:literal}';

/**
 * A value that looks like a credential whatever its variable is called: a known token form (OpenAI and
 * Anthropic `sk-`, Slack `xox?-`, GitHub `ghp_`/`github_pat_`, GitLab `glpat-`, AWS `AKIA…`, Google `AIza…`,
 * a JWT, a PEM private key), a URL with a password, or a long random-looking word (32+ characters of a
 * token alphabet with upper case, lower case and digits, not a path).
 */
const TOKEN_FORMS =
  /\b(?:sk-[A-Za-z0-9_-]{16,}|xox[abposr]-[A-Za-z0-9-]{10,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|AKIA[0-9A-Z]{16}|AIza[\w-]{30,}|eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,})|-----BEGIN [A-Z ]*PRIVATE KEY-----|:\/\/[^\s/:@]+:[^\s/@]+@/;
export function looksLikeSecretValue(value: string): boolean {
  if (TOKEN_FORMS.test(value)) return true;
  return value
    .split(/\s+/)
    .some(
      (word) =>
        /^[A-Za-z0-9+/=_.-]{32,}$/.test(word) &&
        !word.startsWith('/') &&
        !word.startsWith('.') &&
        /[A-Z]/.test(word) &&
        /[a-z]/.test(word) &&
        /[0-9]/.test(word),
    );
}

/**
 * True when a profile `env` value must not travel in workflow inputs as it is: its name looks secret, or
 * its value does (`MY_CONF: sk-…` is as secret as `MY_KEY: sk-…`).
 */
export const isSecretLiteral = (name: string, value: string): boolean =>
  value !== '' && !value.includes('${') && (SECRET_NAME.test(name) || looksLikeSecretValue(value));

/** An env entry that cannot be resolved; the agent's activity fails with it, without retries, as `type`. */
export class EnvReferenceError extends Error {
  override name = 'EnvReferenceError';
  constructor(
    message: string,
    readonly type: 'UnresolvedEnvReference' | 'MissingEnvVariable',
  ) {
    super(message);
  }
}

/**
 * `${NAME}` → the worker's value of NAME, anywhere in each value. A reference to a variable the worker
 * does not have fails without retries (a retry would not find it either), naming the profile and entry.
 */
export function resolveEnvReferences(values: EnvValues, workerEnv: SourceEnv, owner: string): EnvValues {
  const resolved: EnvValues = {};
  for (const [name, value] of Object.entries(values)) {
    if (value === CONFIG_SECRET_REFERENCE) {
      throw new EnvReferenceError(
        `${owner}: env ${name} is a saga.config.yaml value that was not read back from the config file`,
        'UnresolvedEnvReference',
      );
    }
    resolved[name] = value.replace(REFERENCE, (whole, inner: string) => {
      const found = ENV_NAME.test(inner) && !isWorkerSecret(inner) ? workerEnv[inner] : undefined;
      if (found === undefined) {
        throw new EnvReferenceError(
          `${owner}: env ${name} refers to ${whole}, but ${inner} is not set in the worker's environment. ` +
            `Set ${inner} where the worker runs (then restart it), or change the profile.`,
          'MissingEnvVariable',
        );
      }
      return found;
    });
  }
  return resolved;
}

/**
 * The profile as it may travel in workflow inputs: each secret-looking literal replaced by
 * CONFIG_SECRET_REFERENCE, read back from `configFile` by the activity that runs the agent.
 */
export function withSecretsOutOfHistory<P extends { env: EnvValues; configFile: string | null }>(
  profile: P,
  configFile: string | null,
): P {
  const secrets = Object.keys(profile.env).filter((name) => isSecretLiteral(name, profile.env[name]!));
  if (secrets.length === 0) return profile;
  const env = { ...profile.env };
  for (const name of secrets) env[name] = CONFIG_SECRET_REFERENCE;
  return { ...profile, env, configFile };
}
