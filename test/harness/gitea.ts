/**
 * A real Gitea for the forge tests: the binary scripts/install-gitea.sh builds into tools/gitea-<version>/,
 * run headless on 127.0.0.1 on a free port with its own temp work dir, sqlite database and app.ini. Users:
 * `alice` (admin, owns the repo), `bob` (collaborator with write), `carol` (collaborator, read only), each
 * with an API token created through the API; the private repo `alice/demo` (branch `main`, one commit).
 * Starts in 2-3 s on 2 cores; `stop()` (0.1 s) kills it and removes its folder.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import {
  combinedStatus,
  giteaApi,
  gitAuthEnv,
  reviewComment,
  setCommitStatus,
  type GiteaUser,
  type StatusState,
} from './gitea-api';
import { PROJECT_ROOT } from '../../src/project-root';
import { appIni } from './gitea-config';
import { freePort, waitFor } from './wait';

export { gitAuthEnv, giteaApi, type GiteaUser, type StatusState } from './gitea-api';

export const GITEA_VERSION = '1.27.3';
// From the project's root, so the built bench (dist/) finds the same binary as the tests.
export const GITEA_DIR = path.join(PROJECT_ROOT, 'tools', `gitea-${GITEA_VERSION}`);
export const GITEA_BINARY = path.join(GITEA_DIR, 'gitea');

export type UserName = 'alice' | 'bob' | 'carol';

export interface TestGitea {
  /** The web root, e.g. `http://127.0.0.1:40123` (no trailing slash): a ForgeTarget's `url`. */
  url: string;
  /** `${url}/api/v1`. */
  apiUrl: string;
  users: Record<UserName, GiteaUser>;
  /** `alice/demo`. */
  repo: { owner: string; name: string; fullName: string; cloneUrl: string; defaultBranch: string };
  /** Its work dir (app.ini, data, repos, log/). */
  dir: string;
  /** How long the start took, set-up included. */
  startMs: number;
  /** A `/api/v1` call as one of the users (token auth). */
  api(as: UserName, method: string, apiPath: string, body?: unknown): Promise<unknown>;
  /** A commit status on `alice/demo`, set with alice's token as a CI system would. */
  setStatus(
    sha: string,
    state: StatusState,
    context: string,
    description: string,
    targetUrl?: string,
  ): Promise<unknown>;
  /** The combined status of a commit of `alice/demo`. */
  combinedStatus(ref: string): ReturnType<typeof combinedStatus>;
  /** A review with one line comment by `as` on a PR of `alice/demo`. */
  reviewComment(
    as: UserName,
    input: { pr: number; path: string; line: number; body: string; summary?: string; event?: string },
  ): ReturnType<typeof reviewComment>;
  /** The environment for git to push or fetch as `as` (token through a credential helper in the env). */
  gitEnv(as: UserName): Record<string, string>;
  stop(): Promise<void>;
}

const TOKEN_SCOPES = ['write:repository', 'write:issue', 'write:user', 'read:organization', 'read:misc'];
const execFileAsync = promisify(execFile);

/** The binary, or an Error saying how to build it (the forge tests fail rather than skip without it). */
export function giteaBinary(binary = GITEA_BINARY): string {
  if (!existsSync(binary))
    throw new Error(
      `Gitea ${GITEA_VERSION} is not built (${binary} is missing): run scripts/install-gitea.sh`,
    );
  return binary;
}

/** The child's environment: nothing of the test process's but PATH; the root override only here. */
function childEnv(dir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: path.join(dir, 'home'),
    USER: os.userInfo().username,
    GITEA_WORK_DIR: dir,
    GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT: 'true',
  };
}

async function giteaCli(binary: string, dir: string, args: string[]): Promise<void> {
  await execFileAsync(binary, ['--config', path.join(dir, 'app.ini'), '--work-path', dir, ...args], {
    cwd: dir,
    env: childEnv(dir),
    timeout: 60_000,
  });
}

function prepareWorkDir(port: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'saga-gitea-'));
  for (const sub of ['data', 'repos', 'log', 'home']) mkdirSync(path.join(dir, sub));
  // Built without `bindata`: it reads its locales and templates from the work path.
  symlinkSync(path.join(GITEA_DIR, 'options'), path.join(dir, 'options'));
  symlinkSync(path.join(GITEA_DIR, 'templates'), path.join(dir, 'templates'));
  writeFileSync(path.join(dir, 'app.ini'), appIni(dir, port));
  return dir;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

const TokenSchema = z.object({ sha1: z.string().min(20) });

async function createToken(apiUrl: string, login: string, password: string): Promise<string> {
  const created = await giteaApi(apiUrl, { basic: { login, password } }, 'POST', `/users/${login}/tokens`, {
    name: `saga-test-${login}`,
    scopes: TOKEN_SCOPES,
  });
  return TokenSchema.parse(created).sha1;
}

/** bob and carol (through alice's admin API), every user's token, alice/demo and its collaborators. */
async function seed(apiUrl: string, alicePassword: string): Promise<Record<UserName, GiteaUser>> {
  const aliceBasic = { basic: { login: 'alice', password: alicePassword } };
  const passwords: Record<UserName, string> = {
    alice: alicePassword,
    bob: randomBytes(12).toString('hex'),
    carol: randomBytes(12).toString('hex'),
  };
  for (const login of ['bob', 'carol'] as const)
    await giteaApi(apiUrl, aliceBasic, 'POST', '/admin/users', {
      username: login,
      email: `${login}@example.test`,
      password: passwords[login],
      must_change_password: false,
    });
  const users = {} as Record<UserName, GiteaUser>;
  for (const login of ['alice', 'bob', 'carol'] as const)
    users[login] = {
      login,
      password: passwords[login],
      token: await createToken(apiUrl, login, passwords[login]),
    };
  const alice = { token: users.alice.token };
  await giteaApi(apiUrl, alice, 'POST', '/user/repos', {
    name: 'demo',
    private: true,
    auto_init: true,
    default_branch: 'main',
    readme: 'Default',
  });
  await giteaApi(apiUrl, alice, 'PUT', '/repos/alice/demo/collaborators/bob', { permission: 'write' });
  await giteaApi(apiUrl, alice, 'PUT', '/repos/alice/demo/collaborators/carol', { permission: 'read' });
  return users;
}

function launch(binary: string, dir: string): ChildProcess {
  const logFd = openSync(path.join(dir, 'log', 'stdout.log'), 'a');
  const child = spawn(binary, ['--config', path.join(dir, 'app.ini'), '--work-path', dir, 'web'], {
    cwd: dir,
    env: childEnv(dir),
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  // A test process that ends without stop() (a crash, a timeout) takes its Gitea with it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  return child;
}

/** Starts a fresh Gitea (see the file's comment); fails with how to build it when the binary is missing. */
export async function startGitea(): Promise<TestGitea> {
  const started = Date.now();
  const binary = giteaBinary();
  const port = await freePort();
  const dir = prepareWorkDir(port);
  const url = `http://127.0.0.1:${port}`;
  const apiUrl = `${url}/api/v1`;
  let child: ChildProcess | undefined;
  try {
    const alicePassword = randomBytes(12).toString('hex');
    await giteaCli(binary, dir, ['migrate']);
    // prettier-ignore
    await giteaCli(binary, dir, [
      'admin', 'user', 'create', '--username', 'alice', '--password', alicePassword,
      '--email', 'alice@example.test', '--admin', '--must-change-password=false',
    ]);
    child = launch(binary, dir);
    const running = child;
    await waitFor(
      `Gitea answering ${apiUrl}/version (log: ${dir}/log)`,
      async () => {
        if (running.exitCode !== null)
          throw new Error(`Gitea exited with ${running.exitCode}; see ${dir}/log`);
        const res = await fetch(`${apiUrl}/version`, { signal: AbortSignal.timeout(2_000) }).catch(
          () => null,
        );
        return res?.ok === true;
      },
      30_000,
      100,
    );
    const users = await seed(apiUrl, alicePassword);
    return handle({ url, apiUrl, dir, users, child, startMs: Date.now() - started });
  } catch (err) {
    if (child) await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

function handle(s: {
  url: string;
  apiUrl: string;
  dir: string;
  users: Record<UserName, GiteaUser>;
  child: ChildProcess;
  startMs: number;
}): TestGitea {
  const fullName = 'alice/demo';
  return {
    url: s.url,
    apiUrl: s.apiUrl,
    users: s.users,
    dir: s.dir,
    startMs: s.startMs,
    repo: {
      owner: 'alice',
      name: 'demo',
      fullName,
      cloneUrl: `${s.url}/${fullName}.git`,
      defaultBranch: 'main',
    },
    api: (as, method, apiPath, body) =>
      giteaApi(s.apiUrl, { token: s.users[as].token }, method, apiPath, body),
    setStatus: (sha, state, context, description, targetUrl) =>
      setCommitStatus(s.apiUrl, s.users.alice, fullName, { sha, state, context, description, targetUrl }),
    combinedStatus: (ref) => combinedStatus(s.apiUrl, s.users.alice, fullName, ref),
    reviewComment: (as, input) => reviewComment(s.apiUrl, s.users[as], fullName, input),
    gitEnv: (as) => gitAuthEnv(s.users[as].token),
    stop: async () => {
      await stopChild(s.child);
      rmSync(s.dir, { recursive: true, force: true });
    },
  };
}
