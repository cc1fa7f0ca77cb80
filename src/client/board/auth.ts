/**
 * The saga board's gate for reads and answers: a bearer token compared in constant time, and requests from
 * other sites refused by their Origin, Sec-Fetch-Site and Host, so a page elsewhere (or a DNS-rebound name)
 * can neither read nor answer a saga through the user's browser.
 */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import os from 'node:os';

/** A fresh token, printed at start when none is configured. */
export const newBoardToken = (): string => randomBytes(24).toString('base64url');

/**
 * Whether the `Authorization` header carries the token. Both sides are hashed first so the comparison takes
 * the same time whatever the length of the guess (timingSafeEqual needs equal lengths).
 */
export function tokenMatches(expected: string, authorization: string | undefined | null): boolean {
  const match = /^Bearer (.+)$/i.exec(authorization?.trim() ?? '');
  if (!match || !expected) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(match[1]!.trim()), digest(expected));
}

/** The token given as `?token=` (the event stream: EventSource sends no headers), compared as above. */
export const queryTokenMatches = (expected: string, given: string | undefined | null): boolean =>
  !!given && tokenMatches(expected, `Bearer ${given}`);

/**
 * The `host:port` names the board answers to: the bound address, the loopback names when bound there, and
 * on 0.0.0.0 (every interface) each interface's IPv4 address as well.
 */
export function boardHosts(host: string, port: number, interfaces = os.networkInterfaces()): string[] {
  const any = host === '0.0.0.0';
  const loopback = ['127.0.0.1', 'localhost', '::1'].includes(host) || any;
  const names = loopback ? ['127.0.0.1', 'localhost', '[::1]'] : [];
  const own = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  if (!any && !names.includes(own)) names.push(own.toLowerCase());
  if (any)
    for (const entry of Object.values(interfaces).flat())
      if (entry?.family === 'IPv4' && !names.includes(entry.address)) names.push(entry.address);
  // Browsers leave the default port out of Host and Origin.
  return names.flatMap((name) => (port === 80 ? [`${name}:80`, name] : [`${name}:${port}`]));
}

/** The board's own origins, for the Origin check. */
export const boardOrigins = (hosts: readonly string[]): string[] => hosts.map((h) => `http://${h}`);

/** A Host header the board answers to (anything else may be a DNS-rebound name). */
export const hostAllowed = (hosts: readonly string[], hostHeader: string | undefined | null): boolean =>
  !!hostHeader && hosts.includes(hostHeader.toLowerCase());

/**
 * A state-changing request from the board's own page: its Origin (browsers send one with every POST from a
 * script) is the board's, and the fetch metadata does not say cross-site. A request without Origin (curl,
 * scripts) passes here; the token still guards it.
 */
export function originAllowed(
  origins: readonly string[],
  origin: string | undefined | null,
  fetchSite?: string | null,
): boolean {
  if (fetchSite && !['same-origin', 'none'].includes(fetchSite)) return false;
  if (origin === undefined || origin === null || origin === '') return true;
  return origins.includes(origin.toLowerCase());
}
