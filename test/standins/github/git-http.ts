/**
 * Git over HTTP for the GitHub stand-in, on the API's own port as on GitHub Enterprise
 * (`http://HOST/OWNER/REPO.git`): git's smart HTTP protocol served by `git http-backend` run as a CGI (an
 * argument array, the request in CGI variables of its environment), over the stand-in's bare repository.
 * As on GitHub, a push needs a token in HTTP Basic auth (any user name) whose user may write: without one
 * the answer is 401 with `WWW-Authenticate`, so git asks its credential helper; a reader gets 403. Fetching
 * a public repository needs none, but credentials given must be valid.
 */
import { spawn } from 'node:child_process';
import type http from 'node:http';
import type { BareRepo } from './bare-repo';
import type { UserRecord } from './records';

/** `/OWNER/REPO.git/<service path>`: the three requests of git's smart HTTP protocol. */
const GIT_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

export interface GitRequest {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** The owner, repository and service a request is for, or null when it is not a git request. */
export function gitRoute(url: URL): { owner: string; repo: string; service: string } | null {
  const m = GIT_PATH.exec(url.pathname);
  if (!m) return null;
  const service = m[3] === 'info/refs' ? (url.searchParams.get('service') ?? '') : m[3];
  return { owner: m[1], repo: m[2], service };
}

type Auth = { kind: 'none' } | { kind: 'bad' } | { kind: 'user'; user: UserRecord };

/** Basic auth whose password is a user's token (GitHub ignores the user name: `x-access-token`). */
function basicAuth(header: string | undefined, users: UserRecord[]): Auth {
  if (!header) return { kind: 'none' };
  const m = /^Basic (\S+)$/i.exec(header);
  if (!m) return { kind: 'bad' };
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const password = decoded.slice(decoded.indexOf(':') + 1);
  const user = users.find((u) => u.token === password);
  return user ? { kind: 'user', user } : { kind: 'bad' };
}

function plain(res: http.ServerResponse, status: number, text: string, headers = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(`${text}\n`);
}

const mayWrite = (u: UserRecord): boolean => ['admin', 'maintain', 'write'].includes(u.role);

/** Serves one git request for `repo` (already matched by gitRoute) as the user its Basic auth names. */
export async function serveGit(
  repo: BareRepo,
  fullName: string,
  users: UserRecord[],
  req: GitRequest,
  res: http.ServerResponse,
): Promise<void> {
  const route = gitRoute(req.url)!;
  if (route.service !== 'git-upload-pack' && route.service !== 'git-receive-pack') {
    plain(res, 403, 'Smart HTTP only: give ?service=git-upload-pack or git-receive-pack');
    return;
  }
  const auth = basicAuth(req.headers.authorization, users);
  const challenge = { 'www-authenticate': 'Basic realm="GitHub"' };
  if (auth.kind === 'bad' || (auth.kind === 'none' && route.service === 'git-receive-pack')) {
    plain(res, 401, 'Invalid username or token. Password authentication is not supported.', challenge);
    return;
  }
  if (route.service === 'git-receive-pack' && auth.kind === 'user' && !mayWrite(auth.user)) {
    plain(res, 403, `Permission to ${fullName}.git denied to ${auth.user.login}.`);
    return;
  }
  const user = auth.kind === 'user' ? auth.user.login : '';
  const cgi = await runBackend(
    repo,
    `/${fullName}.git${req.url.pathname.replace(GIT_PATH, '/$3')}`,
    user,
    req,
  );
  writeCgiAnswer(res, cgi);
}

/** Runs `git http-backend` for one request and returns its whole output (headers, blank line, body). */
function runBackend(repo: BareRepo, pathInfo: string, user: string, req: GitRequest): Promise<Buffer> {
  const header = (name: string): string => {
    const v = req.headers[name];
    return typeof v === 'string' ? v : '';
  };
  const env = repo.env({
    GIT_PROJECT_ROOT: repo.root,
    GIT_HTTP_EXPORT_ALL: '1',
    // Pushes are allowed here; who may push was decided above.
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.receivepack',
    GIT_CONFIG_VALUE_0: 'true',
    PATH_INFO: pathInfo,
    QUERY_STRING: req.url.search.replace(/^\?/, ''),
    REQUEST_METHOD: req.method,
    CONTENT_TYPE: header('content-type'),
    CONTENT_LENGTH: String(req.body.length),
    HTTP_CONTENT_ENCODING: header('content-encoding'),
    GIT_PROTOCOL: header('git-protocol'),
    REMOTE_USER: user,
    REMOTE_ADDR: '127.0.0.1',
  });
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    // A backend that answers without reading all of its input (a GET, a refused push) closes its stdin
    // early: the write's EPIPE is not the request's failure, its exit and output say how it went.
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => {
      if (out.length === 0 && code !== 0) {
        reject(new Error(`git http-backend exited ${code}: ${Buffer.concat(err).toString('utf8')}`));
      } else resolve(Buffer.concat(out));
    });
    child.stdin.end(req.body);
  });
}

/** A CGI answer (`Status:` and other headers, a blank line, the body) as an HTTP response. */
function writeCgiAnswer(res: http.ServerResponse, cgi: Buffer): void {
  let split = cgi.indexOf('\r\n\r\n');
  let gap = 4;
  if (split < 0) {
    split = cgi.indexOf('\n\n');
    gap = 2;
  }
  const head = cgi.subarray(0, Math.max(split, 0)).toString('utf8');
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of head.split(/\r?\n/).filter(Boolean)) {
    const at = line.indexOf(':');
    const name = line.slice(0, at).trim().toLowerCase();
    const value = line.slice(at + 1).trim();
    if (name === 'status') status = Number(value.split(' ')[0]);
    else headers[name] = value;
  }
  res.writeHead(status, headers);
  res.end(split < 0 ? cgi : cgi.subarray(split + gap));
}
