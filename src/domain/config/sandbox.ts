/**
 * The sandbox as saga.config.yaml, activity inputs and the workflows name it: the modes of `sandbox:`,
 * how checks and set-up commands run, and the network allow-list entries (`host:port`) with the endpoints a
 * process's own environment names. Pure. What builds the sandbox from these (the bubblewrap arguments, the
 * routes, the seccomp filter) is in src/activities/sandbox/.
 */
import { z } from 'zod';

/** `auto` (default): confined, refused when no sandbox tool is installed; `none`: unconfined, said loudly. */
export const SANDBOX_MODES = ['auto', 'none'] as const;
export const SandboxModeSchema = z.enum(SANDBOX_MODES);
export type SandboxMode = z.infer<typeof SandboxModeSchema>;

/** How checks and set-up commands run, as it travels in activity inputs. */
export const CommandSandboxSchema = z.object({
  mode: SandboxModeSchema.default('auto'),
  network: z.array(z.string()).default([]),
  /**
   * The config files the worker reads again before it runs a command unconfined or with network (the
   * input's word is not enough): the user's (null: the worker's saga home's) and a trusted repository's.
   */
  sources: z.object({ user: z.string().nullable(), repo: z.string().nullable() }).nullable().optional(),
});
export type CommandSandbox = z.infer<typeof CommandSandboxSchema>;

/** One host and port a confined process may connect to. */
export interface Endpoint {
  host: string;
  port: number;
}

const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** `host:port` → an endpoint; throws a message naming what is wrong. IPv4 addresses and names only. */
export function parseEndpoint(text: string): Endpoint {
  const match = /^([^:\s]+):(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || !HOST.test(match[1]!) || port < 1 || port > 65535) {
    throw new Error(`'${text}' is not host:port (e.g. api.anthropic.com:443 or 127.0.0.1:8080)`);
  }
  // A name is mapped to a loopback address inside the sandbox; another machine's bare IP cannot be.
  if (/^\d+\.\d+\.\d+\.\d+$/.test(match[1]!) && match[1] !== '127.0.0.1') {
    throw new Error(
      `'${text}': give a host name, or 127.0.0.1 for this machine (other IP addresses cannot be routed)`,
    );
  }
  return { host: match[1]!.toLowerCase(), port };
}

export const NetworkEntrySchema = z.string().superRefine((text, ctx) => {
  try {
    parseEndpoint(text);
  } catch (err) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
  }
});

export const endpointKey = (e: Endpoint) => `${e.host}:${e.port}`;

/**
 * Endpoints a process's own environment points it at: model API base URLs (`ANTHROPIC_BASE_URL`,
 * `OPENAI_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`, `OPENAI_API_BASE`, ...) and HTTP(S) proxies. A URL the
 * user gave the agent is a destination they meant it to reach.
 */
export function endpointsFromEnv(env: Readonly<Record<string, string | undefined>>): Endpoint[] {
  const found: Endpoint[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!value || !isEndpointVariable(name)) continue;
    try {
      found.push(endpointOfUrl(value));
    } catch {
      // Not a URL: nothing to allow.
    }
  }
  return found;
}

/** Whether a variable's value is an endpoint its program connects to (a base URL or a proxy). */
export const isEndpointVariable = (name: string) =>
  /(_BASE_URL|_API_BASE|^HTTPS?_PROXY|^https?_proxy)$/.test(name);

/** The host and port a URL connects to (its scheme's port when it names none); throws when it cannot be one. */
export function endpointOfUrl(text: string): Endpoint {
  const url = new URL(text);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return parseEndpoint(`${url.hostname}:${port}`);
}

export function uniqueEndpoints(endpoints: readonly Endpoint[]): Endpoint[] {
  const seen = new Map<string, Endpoint>();
  for (const e of endpoints) seen.set(endpointKey(e), e);
  return [...seen.values()];
}
