/** Issues, issue comments and labels as GitHub serves them (every field the OpenAPI description requires). */
import { simpleUser } from './fixtures';
import type { IssueCommentRecord, IssueRecord, LabelRecord, RepoRecord } from './records';

const repoApi = (api: string, r: RepoRecord) => `${api}/repos/${r.owner.login}/${r.name}`;

export function label(api: string, r: RepoRecord, l: LabelRecord) {
  return {
    id: l.id,
    node_id: `LA_${l.id}`,
    url: `${repoApi(api, r)}/labels/${encodeURIComponent(l.name)}`,
    name: l.name,
    description: l.description,
    color: l.color,
    default: false,
  };
}

export function issue(api: string, r: RepoRecord, i: IssueRecord, labels: LabelRecord[], comments: number) {
  const url = `${repoApi(api, r)}/issues/${i.number}`;
  return {
    id: i.id,
    node_id: `I_${i.id}`,
    url,
    repository_url: repoApi(api, r),
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: `${api}/html/${r.owner.login}/${r.name}/issues/${i.number}`,
    number: i.number,
    state: i.state,
    title: i.title,
    body: i.body,
    user: simpleUser(api, i.author),
    labels: i.labels.flatMap((name) => {
      const found = labels.find((l) => l.name === name);
      return found ? [label(api, r, found)] : [];
    }),
    assignee: null,
    milestone: null,
    locked: false,
    comments,
    closed_at: null,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    author_association: 'COLLABORATOR',
  };
}

export function issueComment(api: string, r: RepoRecord, c: IssueCommentRecord) {
  return {
    id: c.id,
    node_id: `IC_${c.id}`,
    url: `${repoApi(api, r)}/issues/comments/${c.id}`,
    html_url: `${api}/html/${r.owner.login}/${r.name}/issues/${c.issue}#issuecomment-${c.id}`,
    issue_url: `${repoApi(api, r)}/issues/${c.issue}`,
    body: c.body,
    user: simpleUser(api, c.author),
    created_at: c.at,
    updated_at: c.updatedAt,
    author_association: 'COLLABORATOR',
  };
}
