/**
 * The endpoints an agent CLI's own config files name (a Codex provider in config.toml, an opencode
 * provider's baseURL, aider's api base), read from the user's files as the CLI would find them, so the
 * sandbox lets the CLI reach the model API it is set up for. Read once per saga and profile, before that
 * profile's first run, and kept in the saga's private folder: what a confined agent later writes into a
 * home of its own never widens its allow-list.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CONFIG_FORMATS,
  configEndpoints,
  type ConfigEndpoint,
  type ConfigFormat,
} from '../../domain/config/cli-config-endpoints';
import { reservedEndpoints, reservedRoute } from '../../domain/config/trust';
import { safeName } from './private-home';

type Env = Readonly<Record<string, string | undefined>>;

/** The config files (or inline texts) a CLI reads, where its environment says they are. */
function configSources(format: ConfigFormat, env: Env): { file: string; text?: string }[] {
  const home = env.HOME || os.homedir();
  if (format === 'codex-toml') {
    return [{ file: path.join(env.CODEX_HOME || path.join(home, '.codex'), 'config.toml') }];
  }
  if (format === 'opencode-json') {
    const dir = path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'opencode');
    return [
      ...['config.json', 'opencode.json', 'opencode.jsonc'].map((name) => ({ file: path.join(dir, name) })),
      ...(env.OPENCODE_CONFIG ? [{ file: env.OPENCODE_CONFIG }] : []),
      ...(env.OPENCODE_CONFIG_CONTENT
        ? [{ file: 'OPENCODE_CONFIG_CONTENT', text: env.OPENCODE_CONFIG_CONTENT }]
        : []),
    ];
  }
  return [{ file: path.join(home, '.aider.conf.yml') }];
}

/** Which config format a command's program reads, if any (`/usr/local/bin/codex` → Codex's). */
export function configFormatOf(program: string): ConfigFormat | null {
  const name = path.basename(program) as keyof typeof CONFIG_FORMATS;
  return Object.hasOwn(CONFIG_FORMATS, name) ? CONFIG_FORMATS[name] : null;
}

/**
 * Every endpoint the CLI's config files name, in the environment the CLI runs with. One that leads to
 * saga's own services (Temporal, the board, the codec server, the chat bridge) comes back with its problem,
 * as one an allow-list cannot hold does: no config file opens those.
 */
export async function readCliConfigEndpoints(program: string, env: Env): Promise<ConfigEndpoint[]> {
  const format = configFormatOf(program);
  if (!format) return [];
  const reserved = reservedEndpoints(process.env);
  const found: ConfigEndpoint[] = [];
  for (const source of configSources(format, env)) {
    const text = source.text ?? (await fs.readFile(source.file, 'utf8').catch(() => null));
    if (text === null) continue;
    for (const entry of configEndpoints(format, source.file, text)) {
      const hit = entry.endpoint && reservedRoute(entry.endpoint, reserved);
      found.push(
        hit
          ? { ...entry, endpoint: null, problem: `leads to ${hit.what} (${hit.host}:${hit.port}); refused` }
          : entry,
      );
    }
  }
  return found;
}

/**
 * The endpoints the CLI's config files allow for this saga and profile: read the first time (kept in
 * `<privateHome>/network/`, which no sandbox shows), the same list for every later run.
 */
export async function cliConfigNetwork(
  privateHome: string,
  profile: string,
  program: string,
  env: Env,
): Promise<ConfigEndpoint[]> {
  const file = path.join(privateHome, 'network', `${safeName(profile)}.json`);
  const kept = await fs.readFile(file, 'utf8').catch(() => null);
  if (kept !== null) {
    try {
      return JSON.parse(kept) as ConfigEndpoint[];
    } catch {
      // A torn copy (a crash mid-write cannot make one: it is renamed into place); read again.
    }
  }
  const found = await readCliConfigEndpoints(program, env);
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const scratch = `${file}.new-${randomBytes(6).toString('hex')}`;
  await fs.writeFile(scratch, JSON.stringify(found));
  await fs.rename(scratch, file);
  return found;
}
