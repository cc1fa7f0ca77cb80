/**
 * Reading a forge webhook (Gitea/Forgejo or GitHub) once `saga chat serve` has checked its signature: which
 * saga it wakes and with what ForgeEvent. The payload is untrusted text: only the branch (a strict
 * `saga/<name>/...` name) and the commit sha (hex) are taken from it, each checked here; everything else in
 * it is ignored, so nothing a commenter wrote can reach a saga.
 */
import { z } from 'zod';
import { sagaNameFromBranch } from '../contract/naming';
import type { ForgeEvent } from './forge-shapes';

export type WebhookForge = 'gitea' | 'github';

const ShaSchema = z.string().regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/);
const BranchSchema = z.string().min(1).max(300);
/** An all-zero sha: a deleted branch in a push event. */
const ZERO_SHA = /^0+$/;

/** What a webhook asks of the bridge. */
export type WebhookReading =
  /** Signal `event` to saga `saga` (its head and sha are validated). */
  | { action: 'signal'; saga: string; event: ForgeEvent }
  /** A commit status that names no branch (Gitea's never do): the bridge looks the sha up in what it saw. */
  | { action: 'find-branch'; sha: string }
  /** A push to a saga branch: nothing to signal, but later statuses of `sha` belong to `head`. */
  | { action: 'remember'; head: string; sha: string }
  | { action: 'ignore'; reason: string };

type Kind = ForgeEvent['kind'];

/** Gitea's X-Gitea-Event-Type (Forgejo's X-Forgejo-Event-Type): the fine-grained names. */
const GITEA_KINDS: Record<string, Kind> = {
  status: 'ci',
  pull_request: 'pull-request',
  pull_request_sync: 'pull-request',
  pull_request_review: 'review',
  pull_request_review_approved: 'review',
  pull_request_review_rejected: 'review',
  pull_request_review_comment: 'review',
  pull_request_comment: 'review',
};

/** GitHub's X-GitHub-Event. */
const GITHUB_KINDS: Record<string, Kind> = {
  status: 'ci',
  check_run: 'ci',
  check_suite: 'ci',
  pull_request: 'pull-request',
  pull_request_review: 'review',
  pull_request_review_comment: 'review',
  pull_request_review_thread: 'review',
};

const HeadSchema = z.object({ ref: BranchSchema, sha: ShaSchema });
const PullRequestPayload = z.object({ pull_request: z.object({ head: HeadSchema }) });
const PushPayload = z.object({ ref: BranchSchema, after: ShaSchema });
const StatusPayload = z.object({
  sha: ShaSchema,
  branches: z
    .array(z.object({ name: BranchSchema, commit: z.object({ sha: z.string() }).partial().optional() }))
    .max(100)
    .optional(),
});
const SuiteFields = z.object({
  head_sha: ShaSchema,
  head_branch: BranchSchema.nullable().optional(),
  pull_requests: z
    .array(z.object({ head: z.object({ ref: BranchSchema }) }))
    .max(100)
    .optional(),
});
const CheckRunPayload = z.object({
  check_run: z.object({
    head_sha: ShaSchema,
    check_suite: SuiteFields.partial({ head_sha: true }).optional(),
    pull_requests: SuiteFields.shape.pull_requests,
  }),
});
const CheckSuitePayload = z.object({ check_suite: SuiteFields });

const signal = (kind: Kind, head: string, sha: string): WebhookReading => {
  const saga = sagaNameFromBranch(head);
  return saga
    ? { action: 'signal', saga, event: { kind, head, sha } }
    : { action: 'ignore', reason: 'not a saga branch' };
};

/** The first saga branch among `names`, or undefined. */
const sagaBranch = (names: readonly (string | null | undefined)[]): string | undefined =>
  names.find((n): n is string => typeof n === 'string' && sagaNameFromBranch(n) !== undefined);

function readStatus(payload: unknown): WebhookReading {
  const parsed = StatusPayload.safeParse(payload);
  if (!parsed.success) return { action: 'ignore', reason: 'a status event without a commit sha' };
  const { sha, branches = [] } = parsed.data;
  // A branch whose tip is this commit first: it is the one a PR of it has as head.
  const tips = branches.filter((b) => b.commit?.sha === sha).map((b) => b.name);
  const head = sagaBranch(tips) ?? sagaBranch(branches.map((b) => b.name));
  return head ? signal('ci', head, sha) : { action: 'find-branch', sha };
}

/** The fields of a check suite that name its branch: GitHub sends them for check_suite, and inside check_run. */
type SuiteBranches = { head_branch?: string | null; pull_requests?: { head: { ref: string } }[] };

function readCheck(event: 'check_run' | 'check_suite', payload: unknown): WebhookReading {
  let sha: string;
  let suites: (SuiteBranches | undefined)[];
  if (event === 'check_run') {
    const run = CheckRunPayload.safeParse(payload).data?.check_run;
    if (!run) return { action: 'ignore', reason: 'a check_run event without a head sha' };
    sha = run.head_sha;
    suites = [run.check_suite, run];
  } else {
    const suite = CheckSuitePayload.safeParse(payload).data?.check_suite;
    if (!suite) return { action: 'ignore', reason: 'a check_suite event without a head sha' };
    sha = suite.head_sha;
    suites = [suite];
  }
  const head = sagaBranch(
    suites.flatMap((s) => [s?.head_branch, ...(s?.pull_requests ?? []).map((p) => p.head.ref)]),
  );
  return head ? signal('ci', head, sha) : { action: 'ignore', reason: 'not a saga branch' };
}

function readByKind(forge: WebhookForge, kind: Kind, event: string, payload: unknown): WebhookReading {
  if (kind === 'ci') {
    if (forge === 'github' && (event === 'check_run' || event === 'check_suite'))
      return readCheck(event, payload);
    return readStatus(payload);
  }
  const pr = PullRequestPayload.safeParse(payload);
  if (!pr.success) return { action: 'ignore', reason: `a ${event} event without a pull request head` };
  return signal(kind, pr.data.pull_request.head.ref, pr.data.pull_request.head.sha);
}

/** What one verified webhook means; `event` is the forge's event header (see the maps above). */
export function readForgeWebhook(forge: WebhookForge, event: string, payload: unknown): WebhookReading {
  if (event === 'push') {
    const push = PushPayload.safeParse(payload);
    if (!push.success || ZERO_SHA.test(push.data.after))
      return { action: 'ignore', reason: 'a push without a new commit' };
    const head = push.data.ref.replace(/^refs\/heads\//, '');
    return sagaNameFromBranch(head)
      ? { action: 'remember', head, sha: push.data.after }
      : { action: 'ignore', reason: 'not a saga branch' };
  }
  const kind = (forge === 'gitea' ? GITEA_KINDS : GITHUB_KINDS)[event];
  if (!kind) return { action: 'ignore', reason: `event '${event.slice(0, 60)}' is not one delivery watches` };
  return readByKind(forge, kind, event, payload);
}
