/**
 * The GraphQL documents the Linear tracker adapter (linear.ts) sends through the SDK's client, and the zod
 * schemas its answers are parsed with. Each asks for only what the adapter uses, in one request where the
 * SDK's models would make several; the Linear stand-in validates every one against Linear's schema.
 */
import { z } from 'zod';

export const PAGE = 100;

export const PageInfo = z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() });
export type Page<N> = { nodes: N[]; pageInfo: z.infer<typeof PageInfo> };
export const page = <T extends z.ZodTypeAny>(node: T) =>
  z.object({ nodes: z.array(node), pageInfo: PageInfo });
export const Titled = z.object({ identifier: z.string(), title: z.string() });

export const ISSUE = `query sagaIssue($id: String!) {
  issue(id: $id) {
    id identifier title description url
    state { name }
    labels(first: 250) { nodes { name } }
    children(first: 100) { nodes { identifier title } }
    relations(first: 100) { nodes { relatedIssue { identifier title } } }
    inverseRelations(first: 100) { nodes { issue { identifier title } } }
  }
}`;
export const IssueAnswer = z.object({
  issue: z.object({
    id: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    url: z.string(),
    state: z.object({ name: z.string() }),
    labels: z.object({ nodes: z.array(z.object({ name: z.string() })) }),
    children: z.object({ nodes: z.array(Titled) }),
    relations: z.object({ nodes: z.array(z.object({ relatedIssue: Titled })) }),
    inverseRelations: z.object({ nodes: z.array(z.object({ issue: Titled })) }),
  }),
});

export const ISSUE_ID = `query sagaIssueId($id: String!) { issue(id: $id) { id } }`;
export const IssueIdAnswer = z.object({ issue: z.object({ id: z.string() }) });

export const VIEWER_ID = `query sagaViewerId { viewer { id } }`;
export const ViewerIdAnswer = z.object({ viewer: z.object({ id: z.string() }) });

export const COMMENTS = `query sagaIssueComments($id: String!, $after: String) {
  issue(id: $id) {
    team { id }
    comments(first: ${PAGE}, after: $after) {
      nodes { id body createdAt user { id displayName guest active } botActor { name } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;
export const CommentNode = z.object({
  id: z.string(),
  body: z.string(),
  createdAt: z.string(),
  user: z
    .object({ id: z.string(), displayName: z.string(), guest: z.boolean(), active: z.boolean() })
    .nullable(),
  botActor: z.object({ name: z.string().nullable() }).nullable(),
});
export type CommentNode = z.infer<typeof CommentNode>;
export const CommentsAnswer = z.object({
  issue: z.object({ team: z.object({ id: z.string() }), comments: page(CommentNode) }),
});

export const MEMBERS = `query sagaTeamMembers($id: String!, $after: String) {
  team(id: $id) { members(first: ${PAGE}, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }
}`;
export const MembersAnswer = z.object({ team: z.object({ members: page(z.object({ id: z.string() })) }) });

export const LABELLED = `query sagaLabelledIssues($filter: IssueFilter, $after: String) {
  issues(filter: $filter, first: ${PAGE}, after: $after) {
    nodes { number createdAt }
    pageInfo { hasNextPage endCursor }
  }
}`;
export const LabelledAnswer = z.object({
  issues: page(z.object({ number: z.number(), createdAt: z.string() })),
});

export const PHASE = `query sagaIssuePhase($id: String!) {
  issue(id: $id) {
    id
    state { id }
    labels(first: 250) { nodes { id name } }
    team { id states(first: 100) { nodes { id name type position } } }
  }
  issueLabels(first: 250, filter: { name: { startsWith: "saga:" } }) { nodes { id name team { id } } }
}`;
export const Named = z.object({ id: z.string(), name: z.string() });
export const State = Named.extend({ type: z.string(), position: z.number() });
export type State = z.infer<typeof State>;
export const PhaseAnswer = z.object({
  issue: z.object({
    id: z.string(),
    state: z.object({ id: z.string() }),
    labels: z.object({ nodes: z.array(Named) }),
    team: z.object({ id: z.string(), states: z.object({ nodes: z.array(State) }) }),
  }),
  issueLabels: z.object({
    nodes: z.array(Named.extend({ team: z.object({ id: z.string() }).nullable() })),
  }),
});
