/**
 * Talking to the test Gitea (test/harness/gitea.ts) as one of its users: its `/api/v1` with a token or a
 * password (always in the Authorization header, never in a URL), and git over HTTP with the token handed to
 * git through a credential helper set in the git process's ENVIRONMENT, so it reaches no `.git/config`, no
 * remote URL and no trace.
 */
import { z } from 'zod';
import { pushEnv } from '../../src/activities/forge/push';

export interface GiteaUser {
  login: string;
  /** An API token (repository, issue, user scopes). */
  token: string;
  password: string;
}

/** Basic auth (set-up calls that need a password, e.g. creating a token) or a token. */
export type GiteaAuth = { basic: { login: string; password: string } } | { token: string };

const API_TIMEOUT_MS = 15_000;

/** One `/api/v1` call; an error status becomes an Error naming the call, the status and Gitea's message. */
export async function giteaApi(
  apiUrl: string,
  auth: GiteaAuth,
  method: string,
  apiPath: string,
  body?: unknown,
): Promise<unknown> {
  const authorization =
    'token' in auth
      ? `token ${auth.token}`
      : `Basic ${Buffer.from(`${auth.basic.login}:${auth.basic.password}`).toString('base64')}`;
  const res = await fetch(`${apiUrl}${apiPath}`, {
    method,
    headers: {
      Authorization: authorization,
      Accept: 'application/json',
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(API_TIMEOUT_MS),
  });
  const text = await res.text();
  if (!res.ok) {
    const message = text.length > 0 ? (safeMessage(text) ?? text.slice(0, 300)) : res.statusText;
    throw new Error(`Gitea ${method} ${apiPath} answered ${res.status}: ${message}`);
  }
  return text.length > 0 ? (JSON.parse(text) as unknown) : null;
}

function safeMessage(text: string): string | undefined {
  try {
    const parsed = z.object({ message: z.string() }).safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.message : undefined;
  } catch {
    return undefined;
  }
}

export const CommitStatusSchema = z.object({
  id: z.number(),
  context: z.string(),
  /** Gitea names a status's state `status` in its responses. */
  status: z.enum(['pending', 'success', 'error', 'failure', 'warning', 'skipped']),
  description: z.string(),
  target_url: z.string(),
});

export const CombinedStatusSchema = z.object({
  state: z.string(),
  sha: z.string(),
  total_count: z.number(),
  statuses: z.array(CommitStatusSchema).nullable(),
});

export const ReviewSchema = z.object({
  id: z.number(),
  state: z.string(),
  body: z.string(),
  commit_id: z.string(),
  user: z.object({ login: z.string() }),
});

export type StatusState = 'pending' | 'success' | 'error' | 'failure' | 'warning' | 'skipped';

/** A commit status, as a CI system would set it (POST /repos/{o}/{r}/statuses/{sha}). */
export async function setCommitStatus(
  apiUrl: string,
  as: GiteaUser,
  repo: string,
  status: { sha: string; state: StatusState; context: string; description: string; targetUrl?: string },
): Promise<z.infer<typeof CommitStatusSchema>> {
  const created = await giteaApi(
    apiUrl,
    { token: as.token },
    'POST',
    `/repos/${repo}/statuses/${status.sha}`,
    {
      state: status.state,
      context: status.context,
      description: status.description,
      target_url: status.targetUrl ?? '',
    },
  );
  return CommitStatusSchema.parse(created);
}

/** The combined status of a commit (GET /repos/{o}/{r}/commits/{ref}/status). */
export async function combinedStatus(
  apiUrl: string,
  as: GiteaUser,
  repo: string,
  ref: string,
): Promise<z.infer<typeof CombinedStatusSchema>> {
  const got = await giteaApi(apiUrl, { token: as.token }, 'GET', `/repos/${repo}/commits/${ref}/status`);
  return CombinedStatusSchema.parse(got);
}

/**
 * A review by `as` on pull request `pr` with one line comment (`path`, `line` in the new file) and an
 * optional summary: what a reviewer leaves for the saga to act on. `event` COMMENT by default
 * (REQUEST_CHANGES or APPROVED also; a user cannot approve their own PR).
 */
export async function reviewComment(
  apiUrl: string,
  as: GiteaUser,
  repo: string,
  input: { pr: number; path: string; line: number; body: string; summary?: string; event?: string },
): Promise<z.infer<typeof ReviewSchema>> {
  const created = await giteaApi(
    apiUrl,
    { token: as.token },
    'POST',
    `/repos/${repo}/pulls/${input.pr}/reviews`,
    {
      event: input.event ?? 'COMMENT',
      body: input.summary ?? '',
      comments: [{ path: input.path, body: input.body, new_position: input.line }],
    },
  );
  return ReviewSchema.parse(created);
}

/**
 * The environment for a git process that authenticates to the forge with `token`: the product's own push
 * environment (pushEnv: the token only in a variable, printed by a fixed credential helper after an empty
 * entry that drops the user's helpers), and no prompt if the forge refuses it.
 */
export function gitAuthEnv(token: string): Record<string, string> {
  return { ...(pushEnv(token) as Record<string, string>), GIT_TERMINAL_PROMPT: '0' };
}
