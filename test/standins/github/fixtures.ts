/**
 * The GitHub stand-in's resources as GitHub serves them: every field the OpenAPI description requires for a
 * user, a repository, a pull request, a commit status, a check run and a review comment, built from the
 * stand-in's state. The server checks each response built here against the description before sending it.
 */
import type {
  CheckRunRecord,
  CommentRecord,
  PullRecord,
  RepoRecord,
  StatusRecord,
  UserRecord,
} from './records';

const ZERO_TIME = '2026-01-01T00:00:00Z';

export function simpleUser(api: string, u: UserRecord) {
  const login = encodeURIComponent(u.login); // bots: `name[bot]` → `name%5Bbot%5D`, as GitHub writes it
  const base = `${api}/users/${login}`;
  return {
    login: u.login,
    id: u.id,
    node_id: `U_${u.id}`,
    avatar_url: `${api}/avatars/${login}`,
    gravatar_id: '',
    url: base,
    html_url: `${api}/html/${login}`,
    followers_url: `${base}/followers`,
    following_url: `${base}/following{/other_user}`,
    gists_url: `${base}/gists{/gist_id}`,
    starred_url: `${base}/starred{/owner}{/repo}`,
    subscriptions_url: `${base}/subscriptions`,
    organizations_url: `${base}/orgs`,
    repos_url: `${base}/repos`,
    events_url: `${base}/events{/privacy}`,
    received_events_url: `${base}/received_events`,
    type: u.type,
    site_admin: false,
  };
}

/** `GET /user`: the private-user shape. */
export function privateUser(api: string, u: UserRecord) {
  return {
    ...simpleUser(api, u),
    name: u.login,
    company: null,
    blog: '',
    location: null,
    email: null,
    hireable: null,
    bio: null,
    public_repos: 1,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: ZERO_TIME,
    updated_at: ZERO_TIME,
    private_gists: 0,
    total_private_repos: 0,
    owned_private_repos: 0,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: true,
  };
}

const TEMPLATED_URLS: Record<string, string> = {
  archive_url: '/{archive_format}{/ref}',
  assignees_url: '/assignees{/user}',
  blobs_url: '/git/blobs{/sha}',
  branches_url: '/branches{/branch}',
  collaborators_url: '/collaborators{/collaborator}',
  comments_url: '/comments{/number}',
  commits_url: '/commits{/sha}',
  compare_url: '/compare/{base}...{head}',
  contents_url: '/contents/{+path}',
  contributors_url: '/contributors',
  deployments_url: '/deployments',
  downloads_url: '/downloads',
  events_url: '/events',
  forks_url: '/forks',
  git_commits_url: '/git/commits{/sha}',
  git_refs_url: '/git/refs{/sha}',
  git_tags_url: '/git/tags{/sha}',
  hooks_url: '/hooks',
  issue_comment_url: '/issues/comments{/number}',
  issue_events_url: '/issues/events{/number}',
  issues_url: '/issues{/number}',
  keys_url: '/keys{/key_id}',
  labels_url: '/labels{/name}',
  languages_url: '/languages',
  merges_url: '/merges',
  milestones_url: '/milestones{/number}',
  notifications_url: '/notifications{?since,all,participating}',
  pulls_url: '/pulls{/number}',
  releases_url: '/releases{/id}',
  stargazers_url: '/stargazers',
  statuses_url: '/statuses/{sha}',
  subscribers_url: '/subscribers',
  subscription_url: '/subscription',
  tags_url: '/tags',
  teams_url: '/teams',
  trees_url: '/git/trees{/sha}',
};

/** The minimal-repository fields (combined status) … */
export function minimalRepository(api: string, r: RepoRecord) {
  const base = `${api}/repos/${r.owner.login}/${r.name}`;
  const urls = Object.fromEntries(Object.entries(TEMPLATED_URLS).map(([k, tail]) => [k, base + tail]));
  return {
    ...urls,
    id: r.id,
    node_id: `R_${r.id}`,
    name: r.name,
    full_name: `${r.owner.login}/${r.name}`,
    owner: simpleUser(api, r.owner),
    private: false,
    html_url: `${api}/html/${r.owner.login}/${r.name}`,
    description: null,
    fork: false,
    url: base,
  };
}

/** … and the repository fields (a pull request's head and base). */
export function repository(api: string, r: RepoRecord) {
  return {
    ...minimalRepository(api, r),
    clone_url: `${api}/${r.owner.login}/${r.name}.git`,
    git_url: `git://127.0.0.1/${r.owner.login}/${r.name}.git`,
    ssh_url: `git@127.0.0.1:${r.owner.login}/${r.name}.git`,
    svn_url: `${api}/html/${r.owner.login}/${r.name}`,
    mirror_url: null,
    homepage: null,
    language: null,
    license: null,
    default_branch: r.defaultBranch,
    forks: 0,
    forks_count: 0,
    open_issues: 0,
    open_issues_count: 0,
    stargazers_count: 0,
    watchers: 0,
    watchers_count: 0,
    size: 1,
    has_downloads: true,
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    archived: false,
    disabled: false,
    pushed_at: ZERO_TIME,
    created_at: ZERO_TIME,
    updated_at: ZERO_TIME,
  };
}

/** `reviewComments`: how many review comments the PR has (GitHub counts them on the PR itself). */
export function pullRequest(api: string, r: RepoRecord, p: PullRecord, reviewComments = 0) {
  const self = `${api}/repos/${r.owner.login}/${r.name}/pulls/${p.number}`;
  const issue = `${api}/repos/${r.owner.login}/${r.name}/issues/${p.number}`;
  const html = `${api}/html/${r.owner.login}/${r.name}/pull/${p.number}`;
  const side = (ref: string, sha: string) => ({
    label: `${r.owner.login}:${ref}`,
    ref,
    sha,
    user: simpleUser(api, r.owner),
    repo: repository(api, r),
  });
  const statuses = `${api}/repos/${r.owner.login}/${r.name}/statuses/${p.headSha}`;
  return {
    url: self,
    id: p.id,
    node_id: `PR_${p.id}`,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: issue,
    commits_url: `${self}/commits`,
    review_comments_url: `${self}/comments`,
    review_comment_url: `${api}/repos/${r.owner.login}/${r.name}/pulls/comments{/number}`,
    comments_url: `${issue}/comments`,
    statuses_url: statuses,
    number: p.number,
    state: p.state,
    locked: false,
    title: p.title,
    user: simpleUser(api, p.author),
    body: p.body,
    labels: [],
    milestone: null,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    closed_at: p.state === 'closed' ? p.updatedAt : null,
    merged_at: p.merged ? p.updatedAt : null,
    merge_commit_sha: p.mergeCommitSha,
    assignee: null,
    head: side(p.head, p.headSha),
    base: side(p.base, p.baseSha),
    _links: {
      self: { href: self },
      html: { href: html },
      issue: { href: issue },
      comments: { href: `${issue}/comments` },
      review_comments: { href: `${self}/comments` },
      review_comment: { href: `${api}/repos/${r.owner.login}/${r.name}/pulls/comments{/number}` },
      commits: { href: `${self}/commits` },
      statuses: { href: statuses },
    },
    author_association: 'OWNER',
    auto_merge: null,
    draft: p.draft,
    merged: p.merged,
    mergeable: p.state === 'open' ? true : null,
    mergeable_state: p.draft ? 'draft' : 'clean',
    merged_by: p.merged ? simpleUser(api, r.owner) : null,
    comments: 0,
    review_comments: reviewComments,
    maintainer_can_modify: false,
    commits: 1,
    additions: 1,
    deletions: 0,
    changed_files: 1,
  };
}

export function commitStatus(api: string, r: RepoRecord, s: StatusRecord) {
  return {
    url: `${api}/repos/${r.owner.login}/${r.name}/statuses/${s.sha}`,
    avatar_url: null,
    id: s.id,
    node_id: `SC_${s.id}`,
    state: s.state,
    description: s.description,
    target_url: s.targetUrl,
    context: s.context,
    created_at: s.at,
    updated_at: s.at,
  };
}

export function checkRun(api: string, r: RepoRecord, c: CheckRunRecord) {
  const url = `${api}/repos/${r.owner.login}/${r.name}/check-runs/${c.id}`;
  return {
    id: c.id,
    node_id: `CR_${c.id}`,
    head_sha: c.sha,
    external_id: null,
    url,
    html_url: `${api}/html/${r.owner.login}/${r.name}/runs/${c.id}`,
    details_url: c.detailsUrl,
    status: c.status,
    conclusion: c.conclusion,
    started_at: c.at,
    completed_at: c.status === 'completed' ? c.at : null,
    output: {
      title: c.title,
      summary: c.summary,
      text: c.text,
      annotations_count: 0,
      annotations_url: `${url}/annotations`,
    },
    name: c.name,
    check_suite: null,
    app: null,
    pull_requests: [],
  };
}

export function reviewComment(api: string, r: RepoRecord, c: CommentRecord) {
  const self = `${api}/repos/${r.owner.login}/${r.name}/pulls/comments/${c.id}`;
  const pull = `${api}/repos/${r.owner.login}/${r.name}/pulls/${c.pull}`;
  const html = `${api}/html/${r.owner.login}/${r.name}/pull/${c.pull}#discussion_r${c.id}`;
  return {
    url: self,
    id: c.id,
    node_id: `PRRC_${c.id}`,
    pull_request_review_id: c.id,
    diff_hunk: '@@ -1 +1 @@',
    path: c.path,
    line: c.line ?? undefined,
    commit_id: c.commitId,
    original_commit_id: c.commitId,
    ...(c.inReplyTo === null ? {} : { in_reply_to_id: c.inReplyTo }),
    user: simpleUser(api, c.author),
    body: c.body,
    created_at: c.at,
    updated_at: c.at,
    html_url: html,
    pull_request_url: pull,
    author_association: c.author.role === 'none' || c.author.role === 'read' ? 'NONE' : 'COLLABORATOR',
    _links: { self: { href: self }, html: { href: html }, pull_request: { href: pull } },
  };
}
