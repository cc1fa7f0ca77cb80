/**
 * Which saga.config.yaml settings a repository may set (README, Security model: "Trusted config only from you"), and the limits no config file
 * lifts: a profile HOME that would bind the host's home, saga home or repository writable, and routes to
 * the Temporal server, the board, the codec server and the chat bridge. Pure: the loader and the sandbox
 * pass in the paths and addresses of their own machine.
 */
import { BUILTIN_AGENTS, type SagaConfig } from './config';
import { endpointsFromEnv, parseEndpoint, type Endpoint } from './sandbox';
import { devServerUiPort } from '../contract/naming';

/**
 * Settings a repository's file may set: they choose among what the user allowed and how long or how often
 * it runs or what it may cost, never what runs or what it reaches. `*` is one key of a record.
 */
const REPO_SAFE_PATHS: readonly string[] = [
  'default_agent',
  'attempts',
  'check_timeout',
  'heartbeat_timeout',
  'budget.*',
  'prices.*',
  'handoff.max_files',
  'handoff.max_file_bytes',
  'handoff.skip_hooks',
  'worktree.port_range_size',
  'agents.*.timeout',
  'agents.*.idle_timeout',
  'agents.*.model',
  'agents.*.subagent_dispatch',
  'agents.*.resume',
  // Delivery: how PRs are laid out and how many CI fix tasks run, never where they go or who merges.
  'pr',
  'ci_fix_attempts',
  // Intake: where questions are asked too and how often and how many, never which tracker or token.
  'intake.questions',
  'intake.max_sagas',
  'intake.poll_seconds',
];

/**
 * What a repository could do with the user's forge or tracker if its file set these keys (they are outside
 * REPO_SAFE_PATHS, so refused unless trusted); the refusal says so.
 */
const DELIVERY_RISKS: Readonly<Record<string, string>> = {
  delivery: 'it would push and open pull requests with your forge token',
  forge: 'it could send your forge token to another host',
  auto_merge: 'it could merge pull requests without asking you',
  review_bots: "it could have bots' review comments acted on",
  intake: 'it could send your tracker token to another host',
};

/** Why a repository may not set `keyPath` when it is a delivery or intake key, else null. */
export function repoSettingRisk(keyPath: string): string | null {
  return DELIVERY_RISKS[keyPath.split('.')[0]!] ?? null;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const matchesSafe = (keys: readonly string[]) =>
  REPO_SAFE_PATHS.some((pattern) => {
    const parts = pattern.split('.');
    // A safe pattern covers everything below it (a price's fields, a budget's).
    return parts.length <= keys.length && parts.every((p, i) => p === '*' || p === keys[i]);
  });

/** Every leaf setting of a parsed YAML mapping, as its key path (arrays are one leaf; `{}` sets nothing). */
function leaves(value: unknown, at: string[] = []): { keys: string[]; value: unknown }[] {
  if (!isRecord(value)) return [{ keys: at, value }];
  return Object.entries(value).flatMap(([k, v]) => leaves(v, [...at, k]));
}

/** What the user's own config (or the built-in preset of a profile) already says at `keys`. */
function userValue(user: SagaConfig, keys: readonly string[]): unknown {
  if (keys[0] === 'agents' && keys.length >= 3) {
    const [, name, field, ...rest] = keys;
    const own = (user.agents[name!] ?? {}) as Record<string, unknown>;
    const preset = (BUILTIN_AGENTS[name!] ?? {}) as Record<string, unknown>;
    let value: unknown = field! in own ? own[field!] : preset[field!];
    for (const k of rest) value = isRecord(value) ? value[k] : undefined;
    return value;
  }
  let value: unknown = user;
  for (const k of keys) value = isRecord(value) ? value[k] : undefined;
  return value;
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The settings of a repository's config (its parsed YAML) that could widen what runs or what it reaches:
 * every key outside REPO_SAFE_PATHS whose value differs from what the user's config already says.
 * Each is `key.path: value`, in file order.
 */
export function repoWideningSettings(repoRaw: unknown, user: SagaConfig): string[] {
  if (!isRecord(repoRaw)) return [];
  // Choosing among the user's profiles widens nothing, unless the one chosen runs unconfined.
  const unconfinedChoice = (keys: readonly string[], value: unknown) =>
    keys.join('.') === 'default_agent' &&
    typeof value === 'string' &&
    value !== user.default_agent &&
    (user.agents[value]?.sandbox ?? user.sandbox) === 'none';
  return leaves(repoRaw)
    .filter(
      ({ keys, value }) =>
        keys.length > 0 &&
        (unconfinedChoice(keys, value) || (!matchesSafe(keys) && !sameValue(value, userValue(user, keys)))),
    )
    .map(({ keys, value }) => `${keys.join('.')}: ${JSON.stringify(value)}`);
}

/** The repository's settings over the user's: mappings merged key by key, lists and values replaced. */
export function mergeConfigObjects(user: unknown, repo: unknown): unknown {
  if (!isRecord(user) || !isRecord(repo)) return repo === undefined ? user : repo;
  const merged: Record<string, unknown> = { ...user };
  for (const [k, v] of Object.entries(repo)) merged[k] = k in user ? mergeConfigObjects(user[k], v) : v;
  return merged;
}

/** `p` normalised (absolute, no `.`/`..`/double or trailing slashes); null when not absolute. */
function normalise(p: string): string | null {
  if (!p.startsWith('/')) return null;
  const parts: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

const isAncestorOrSelf = (parent: string, child: string) =>
  parent === '/' || child === parent || child.startsWith(`${parent}/`);

/** The host folders a profile's HOME must not contain (it is bound writable into the sandbox). */
export interface ProtectedFolders {
  userHome: string;
  sagaHomes: readonly string[];
  repos: readonly string[];
}

/**
 * Why a profile's HOME cannot be used, or null: `/`, an ancestor of the user's home, or the saga home or
 * repository or a folder holding them would be bound writable into every run. The user's own home is
 * fine: then only the CLI's state folders in it are writable.
 */
export function homeProblem(home: string, protect: ProtectedFolders): string | null {
  const target = normalise(home);
  if (target === null) return null;
  const userHome = normalise(protect.userHome);
  if (target === userHome) return null;
  if (target === '/') return 'is / (the whole host would be writable in the sandbox)';
  if (userHome && isAncestorOrSelf(target, userHome)) return `holds the user's home ${userHome}`;
  for (const [what, list] of [
    ['saga home', protect.sagaHomes],
    ['repository', protect.repos],
  ] as const) {
    for (const p of list) {
      const folder = normalise(p);
      if (folder && isAncestorOrSelf(target, folder)) {
        return `${folder === target ? 'is' : 'holds'} the ${what} ${folder}`;
      }
    }
  }
  return null;
}

/** A service of saga's own that no process it starts may reach. */
export interface ReservedEndpoint {
  what: string;
  host: string;
  port: number;
}

export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';
export const DEFAULT_BOARD_PORT = 8234;
export const DEFAULT_CODEC_PORT = 8888;
export const DEFAULT_CHAT_PORT = 3000;

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '0.0.0.0', '::1', 'ip6-localhost', 'ip6-loopback']);

/**
 * The Temporal server (TEMPORAL_ADDRESS, and the dev server's Web UI at its port + 1000), the board, the
 * codec server and the chat bridge (SAGA_CHAT_PORT) at the ports this process's environment names, the
 * board and codec server at their default ports (they are given theirs on their own command line).
 */
export function reservedEndpoints(env: Readonly<Record<string, string | undefined>>): ReservedEndpoint[] {
  const reserved: ReservedEndpoint[] = [];
  const address = env.TEMPORAL_ADDRESS || DEFAULT_TEMPORAL_ADDRESS;
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address.trim());
  const temporalHost = (match?.[1] ?? 'localhost').toLowerCase();
  const temporalPort = match ? Number(match[2]) : 7233;
  reserved.push({ what: 'the Temporal server', host: temporalHost, port: temporalPort });
  reserved.push({
    what: "the Temporal server's Web UI",
    host: temporalHost,
    port: devServerUiPort(temporalPort),
  });
  if (temporalPort !== 7233) {
    reserved.push({ what: 'the Temporal server', host: 'localhost', port: 7233 });
  }
  const chat = Number(env.SAGA_CHAT_PORT);
  reserved.push({ what: 'the board', host: 'localhost', port: DEFAULT_BOARD_PORT });
  reserved.push({ what: 'the codec server', host: 'localhost', port: DEFAULT_CODEC_PORT });
  reserved.push({
    what: 'the chat bridge',
    host: 'localhost',
    port: Number.isInteger(chat) && chat > 0 && chat < 65536 ? chat : DEFAULT_CHAT_PORT,
  });
  return reserved;
}

/** The reserved service `endpoint` leads to, or null. Loopback names count as one host. */
export function reservedRoute(
  endpoint: Endpoint,
  reserved: readonly ReservedEndpoint[],
): ReservedEndpoint | null {
  const host = endpoint.host.toLowerCase();
  return (
    reserved.find(
      (r) =>
        r.port === endpoint.port && (r.host === host || (LOCAL_HOSTS.has(r.host) && LOCAL_HOSTS.has(host))),
    ) ?? null
  );
}

/** One message per network entry or base-URL/proxy variable of `config` that leads to a reserved service. */
export function reservedRouteProblems(config: SagaConfig, reserved: readonly ReservedEndpoint[]): string[] {
  const problems: string[] = [];
  const check = (where: string, entry: string, endpoint: Endpoint) => {
    const hit = reservedRoute(endpoint, reserved);
    if (hit) problems.push(`${where}: '${entry}' leads to ${hit.what} (${hit.host}:${hit.port}); refused`);
  };
  const entries = (where: string, list: readonly string[]) => {
    for (const entry of list) {
      try {
        check(where, entry, parseEndpoint(entry));
      } catch {
        // The schema reports entries that are not host:port.
      }
    }
  };
  entries('network', config.network);
  for (const [name, profile] of Object.entries(config.agents)) {
    entries(`agents.${name}.network`, profile.network ?? []);
    for (const [variable, value] of Object.entries(profile.env ?? {})) {
      for (const endpoint of endpointsFromEnv({ [variable]: value })) {
        check(`agents.${name}.env.${variable}`, value, endpoint);
      }
    }
  }
  return problems;
}

/** One message per profile whose literal `env.HOME` homeProblem refuses. */
export function profileHomeProblems(config: SagaConfig, protect: ProtectedFolders): string[] {
  const problems: string[] = [];
  for (const [name, profile] of Object.entries(config.agents)) {
    const home = profile.env?.HOME;
    const why = home ? homeProblem(home, protect) : null;
    if (why) problems.push(`agents.${name}.env.HOME: '${home}' ${why}; refused`);
  }
  return problems;
}

/** What of a config runs unconfined (`sandbox: none`), for loud warnings; empty when everything is confined. */
export function unconfinedParts(config: SagaConfig, profileNames: readonly string[]): string[] {
  const parts: string[] = [];
  if (config.sandbox === 'none') {
    parts.push(
      'checks, set-up commands and every agent profile without a sandbox setting of its own (sandbox: none)',
    );
  }
  for (const name of profileNames) {
    if (config.agents[name]?.sandbox === 'none')
      parts.push(`agent profile '${name}' (agents.${name}.sandbox: none)`);
  }
  return parts;
}
