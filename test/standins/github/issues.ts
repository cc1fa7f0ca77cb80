/**
 * The GitHub stand-in's issue operations (by operationId): issues, their comments and labels, as the tracker
 * adapter (src/activities/tracker/github.ts) and the test's actors call them. Lists are paged as GitHub pages
 * them (`per_page`, `page`); labels are dropped from a new issue by a user without push access, as GitHub does.
 */
import { issue, issueComment, label } from './issue-fixtures';
import type { GitHubState, IssueRecord, UserRecord } from './records';
import type { Answer, Call } from './routes';

const DOCS = 'https://docs.github.com/rest';
const fail = (status: number, message: string): Answer => ({
  status,
  body: { message, documentation_url: DOCS },
});
const mayWrite = (u: UserRecord): boolean => ['admin', 'maintain', 'write'].includes(u.role);
const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

function page<T>(call: Call, all: T[]): T[] {
  const perPage = Number(call.query.get('per_page') ?? 30);
  const at = Number(call.query.get('page') ?? 1);
  return all.slice((at - 1) * perPage, at * perPage);
}

const issueOf = (s: GitHubState, call: Call): IssueRecord | undefined =>
  s.issues.find((i) => i.number === Number(call.params.issue_number));

function serveIssue(s: GitHubState, i: IssueRecord) {
  return issue(s.api, s.repo, i, s.labels, s.issueComments.filter((c) => c.issue === i.number).length);
}

function labelNames(body: Record<string, unknown>): string[] {
  const list = Array.isArray(body.labels) ? (body.labels as unknown[]) : [];
  return list.map((l) => (typeof l === 'string' ? l : String((l as { name?: unknown }).name ?? '')));
}

function createIssue(s: GitHubState, call: Call): Answer {
  const at = now();
  const record: IssueRecord = {
    number: s.nextNumber++,
    id: s.nextId++,
    title: String(call.body.title ?? ''),
    body: typeof call.body.body === 'string' ? call.body.body : null,
    state: 'open',
    // GitHub: "Only users with push access can set labels for new issues. Labels are silently dropped otherwise."
    labels: mayWrite(call.viewer)
      ? labelNames(call.body).filter((n) => s.labels.some((l) => l.name === n))
      : [],
    author: call.viewer,
    parent: null,
    createdAt: at,
    updatedAt: at,
  };
  s.issues.push(record);
  return { status: 201, body: serveIssue(s, record) };
}

function addLabels(s: GitHubState, call: Call): Answer {
  const i = issueOf(s, call);
  if (!i) return fail(404, 'Not Found');
  if (!mayWrite(call.viewer)) return fail(403, 'Must have push access to add labels');
  for (const name of labelNames(call.body)) {
    if (!s.labels.some((l) => l.name === name))
      s.labels.push({ id: s.nextId++, name, color: 'ededed', description: null });
    if (!i.labels.includes(name)) i.labels.push(name);
  }
  return {
    status: 200,
    body: i.labels.map((n) =>
      label(
        s.api,
        s.repo,
        s.labels.find((l) => l.name === n)!,
      ),
    ),
  };
}

export const issueRoutes: Record<string, (s: GitHubState, call: Call) => Answer> = {
  'issues/create': createIssue,
  'issues/get': (s, call) => {
    const i = issueOf(s, call);
    return i ? { status: 200, body: serveIssue(s, i) } : fail(404, 'Not Found');
  },
  'issues/list-for-repo': (s, call) => {
    const state = call.query.get('state') ?? 'open';
    const wanted = (call.query.get('labels') ?? '').split(',').filter(Boolean);
    const list = s.issues
      .filter((i) => (state === 'all' || i.state === state) && wanted.every((w) => i.labels.includes(w)))
      .sort((a, b) => (call.query.get('direction') === 'asc' ? a.number - b.number : b.number - a.number));
    return { status: 200, body: page(call, list).map((i) => serveIssue(s, i)) };
  },
  'issues/list-sub-issues': (s, call) => {
    const i = issueOf(s, call);
    if (!i) return fail(404, 'Not Found');
    const subs = s.issues.filter((x) => x.parent === i.number);
    return { status: 200, body: page(call, subs).map((x) => serveIssue(s, x)) };
  },
  'issues/list-comments': (s, call) => {
    const i = issueOf(s, call);
    if (!i) return fail(404, 'Not Found');
    const list = s.issueComments.filter((c) => c.issue === i.number);
    return { status: 200, body: page(call, list).map((c) => issueComment(s.api, s.repo, c)) };
  },
  'issues/create-comment': (s, call) => {
    const i = issueOf(s, call);
    if (!i) return fail(404, 'Not Found');
    const at = now();
    const c = {
      id: s.nextId++,
      issue: i.number,
      body: String(call.body.body ?? ''),
      author: call.viewer,
      at,
      updatedAt: at,
    };
    s.issueComments.push(c);
    return { status: 201, body: issueComment(s.api, s.repo, c) };
  },
  'issues/update-comment': (s, call) => {
    const c = s.issueComments.find((x) => x.id === Number(call.params.comment_id));
    if (!c) return fail(404, 'Not Found');
    if (c.author.login !== call.viewer.login && !mayWrite(call.viewer)) return fail(403, 'Forbidden');
    Object.assign(c, { body: String(call.body.body ?? ''), updatedAt: now() });
    return { status: 200, body: issueComment(s.api, s.repo, c) };
  },
  'issues/get-label': (s, call) => {
    const l = s.labels.find((x) => x.name === call.params.name);
    return l ? { status: 200, body: label(s.api, s.repo, l) } : fail(404, 'Not Found');
  },
  'issues/create-label': (s, call) => {
    if (!mayWrite(call.viewer)) return fail(404, 'Not Found');
    const name = String(call.body.name);
    if (s.labels.some((l) => l.name === name)) return fail(422, 'Validation Failed: already_exists');
    const color = typeof call.body.color === 'string' ? call.body.color : 'ededed';
    const description = typeof call.body.description === 'string' ? call.body.description : null;
    const record = { id: s.nextId++, name, color, description };
    s.labels.push(record);
    return { status: 201, body: label(s.api, s.repo, record) };
  },
  'issues/add-labels': addLabels,
  'issues/remove-label': (s, call) => {
    const i = issueOf(s, call);
    if (!i || !i.labels.includes(call.params.name)) return fail(404, 'Label does not exist');
    if (!mayWrite(call.viewer)) return fail(403, 'Must have push access to remove labels');
    i.labels = i.labels.filter((n) => n !== call.params.name);
    return {
      status: 200,
      body: i.labels.map((n) =>
        label(
          s.api,
          s.repo,
          s.labels.find((l) => l.name === n)!,
        ),
      ),
    };
  },
};

/**
 * As GitHub does when a PR merges into the default branch: the issues its body names with a closing
 * keyword (`Closes #3`, `fixes alice/demo#3`) in this repository are closed.
 */
export function closeReferencedIssues(s: GitHubState, body: string): void {
  const keyword = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:([\w.-]+)\/([\w.-]+))?#(\d+)\b/gi;
  for (const [, owner, repo, number] of body.matchAll(keyword)) {
    if (owner && (owner !== s.owner.login || repo !== s.repo.name)) continue;
    const issue = s.issues.find((i) => i.number === Number(number));
    if (issue && issue.state === 'open') Object.assign(issue, { state: 'closed', updatedAt: now() });
  }
}
