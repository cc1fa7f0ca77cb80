/**
 * The model API endpoints an agent CLI's own config files name: Codex's config.toml (`openai_base_url`,
 * `[model_providers.X] base_url`), opencode's opencode.json (`provider.X.options.baseURL`) and aider's
 * .aider.conf.yml (`openai-api-base` and the like, `set-env`). These are the user's own files, so what they
 * name is a destination the user meant the CLI to reach. Pure: the caller reads the files.
 */
import { parse as parseToml } from 'smol-toml';
import YAML from 'yaml';
import { endpointOfUrl, isEndpointVariable, type Endpoint } from './sandbox';

/** The CLIs whose config files are read, by program name. */
export const CONFIG_FORMATS = {
  codex: 'codex-toml',
  opencode: 'opencode-json',
  aider: 'aider-yaml',
} as const;
export type ConfigFormat = (typeof CONFIG_FORMATS)[keyof typeof CONFIG_FORMATS];

/** One URL a config file names, and where (`model_providers.local.base_url`). */
export interface ConfigUrl {
  key: string;
  url: string;
}

/** An endpoint read from a config file, or why one of its URLs cannot be allowed. */
export interface ConfigEndpoint {
  /** `<file>: <key>`, for `saga doctor` and the failure reasons. */
  source: string;
  url: string;
  endpoint: Endpoint | null;
  problem: string | null;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

function codexUrls(text: string): ConfigUrl[] {
  const doc = parseToml(text) as Record<string, unknown>;
  const urls: ConfigUrl[] = [];
  for (const key of ['openai_base_url', 'chatgpt_base_url']) {
    const url = str(doc[key]);
    if (url) urls.push({ key, url });
  }
  const providers = isRecord(doc.model_providers) ? doc.model_providers : {};
  for (const [name, provider] of Object.entries(providers)) {
    const url = isRecord(provider) ? str(provider.base_url) : null;
    if (url) urls.push({ key: `model_providers.${name}.base_url`, url });
  }
  return urls;
}

/** JSON with comments and trailing commas (opencode.jsonc) as plain JSON: strings are kept as they are. */
export function stripJsonComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const end = /^"(?:[^"\\]|\\.)*"?/.exec(text.slice(i))![0];
      out += end;
      i += end.length - 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? text.length : close + 1;
    } else out += c;
  }
  return out.replace(/,(\s*[}\]])/g, '$1');
}

function opencodeUrls(text: string): ConfigUrl[] {
  const doc = JSON.parse(stripJsonComments(text)) as unknown;
  const providers = isRecord(doc) && isRecord(doc.provider) ? doc.provider : {};
  const urls: ConfigUrl[] = [];
  for (const [name, provider] of Object.entries(providers)) {
    const options = isRecord(provider) && isRecord(provider.options) ? provider.options : {};
    const url = str(options.baseURL);
    if (url) urls.push({ key: `provider.${name}.options.baseURL`, url });
  }
  return urls;
}

function aiderUrls(text: string): ConfigUrl[] {
  const doc = YAML.parse(text) as unknown;
  if (!isRecord(doc)) return [];
  const urls: ConfigUrl[] = [];
  for (const [key, value] of Object.entries(doc)) {
    const url = str(value);
    if (url && /(^|-)api-base$|(^|-)base-url$/.test(key)) urls.push({ key, url });
  }
  // `set-env: [OPENAI_API_BASE=https://...]` sets the variable the model client reads.
  const setEnv = doc['set-env'];
  for (const entry of Array.isArray(setEnv) ? setEnv : setEnv ? [setEnv] : []) {
    const match = typeof entry === 'string' ? /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+)$/.exec(entry) : null;
    if (match && isEndpointVariable(match[1]!)) urls.push({ key: `set-env ${match[1]}`, url: match[2]! });
  }
  return urls;
}

const READERS: Record<ConfigFormat, (text: string) => ConfigUrl[]> = {
  'codex-toml': codexUrls,
  'opencode-json': opencodeUrls,
  'aider-yaml': aiderUrls,
};

/**
 * The endpoints one config file names; a URL that is not one an allow-list can hold (another machine's bare
 * IP, not a URL) comes back with its problem. A file that does not parse names nothing, said as a problem.
 */
export function configEndpoints(format: ConfigFormat, file: string, text: string): ConfigEndpoint[] {
  let urls: ConfigUrl[];
  try {
    urls = READERS[format](text);
  } catch (error) {
    const why = (error as Error).message.split('\n')[0] ?? '';
    return [{ source: file, url: '', endpoint: null, problem: `cannot be read (${why})` }];
  }
  return urls.map(({ key, url }) => {
    const source = `${file}: ${key}`;
    try {
      return { source, url, endpoint: endpointOfUrl(url), problem: null };
    } catch (error) {
      return { source, url, endpoint: null, problem: (error as Error).message };
    }
  });
}
