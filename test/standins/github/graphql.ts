/**
 * The GitHub stand-in's GraphQL endpoint (`POST /graphql`): each document is validated against GitHub's
 * published schema (npm `@octokit/graphql-schema`, its introspection JSON) with graphql's own `validate`,
 * then executed by graphql against that same schema, so an answer has the schema's types by construction.
 * It serves the three fields the forge adapter and its tests use: `repository.pullRequest.reviewThreads`,
 * `markPullRequestReadyForReview` and `resolveReviewThread`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type GraphQLSchema,
  type IntrospectionQuery,
  buildClientSchema,
  execute,
  parse,
  validate,
} from 'graphql';
import type { CommentRecord, PullRecord, UserRecord } from './records';

function loadSchema(): GraphQLSchema {
  // The package exports ESM only (no package.json export): find its directory on the resolution paths.
  const dirs = require.resolve.paths('@octokit/graphql-schema') ?? [];
  const file = dirs
    .map((d) => path.join(d, '@octokit', 'graphql-schema', 'schema.json'))
    .find((f) => existsSync(f));
  if (!file) throw new Error('@octokit/graphql-schema is not installed');
  const json = JSON.parse(readFileSync(file, 'utf8')) as { data?: IntrospectionQuery } & IntrospectionQuery;
  return buildClientSchema(json.data ?? json);
}

let cached: GraphQLSchema | undefined;
export const githubGraphQLSchema = (): GraphQLSchema => (cached ??= loadSchema());

/** What the GraphQL endpoint reads and changes in the stand-in's state. */
export interface GraphQLState {
  owner: string;
  repo: string;
  pulls: PullRecord[];
  comments: CommentRecord[];
  resolvedThreads: Set<string>;
}

export interface GraphQLOutcome {
  status: number;
  body: unknown;
  /** Validation errors and type errors in the stand-in's own answer: each one fails the test. */
  violations: string[];
}

function threadsOf(state: GraphQLState, pull: PullRecord) {
  const ids = [...new Set(state.comments.filter((c) => c.pull === pull.number).map((c) => c.threadId))];
  return ids.map((id) => ({
    __typename: 'PullRequestReviewThread',
    id,
    isResolved: state.resolvedThreads.has(id),
    comments: () => ({
      totalCount: state.comments.filter((c) => c.threadId === id).length,
      nodes: state.comments
        .filter((c) => c.threadId === id)
        .map((c) => ({
          __typename: 'PullRequestReviewComment',
          fullDatabaseId: String(c.id),
          id: `PRRC_${c.id}`,
        })),
      pageInfo: { hasNextPage: false, endCursor: null },
    }),
  }));
}

function rootFor(state: GraphQLState, viewer: UserRecord) {
  const mayWrite = ['admin', 'maintain', 'write'].includes(viewer.role);
  const denied = () => {
    throw new Error(`${viewer.login} does not have the correct permissions to execute this mutation`);
  };
  return {
    repository: ({ owner, name }: { owner: string; name: string }) =>
      owner !== state.owner || name !== state.repo
        ? null
        : {
            __typename: 'Repository',
            pullRequest: ({ number }: { number: number }) => {
              const pull = state.pulls.find((p) => p.number === number);
              if (!pull) return null;
              return {
                __typename: 'PullRequest',
                number,
                reviewThreads: () => {
                  const nodes = threadsOf(state, pull);
                  return {
                    totalCount: nodes.length,
                    nodes,
                    pageInfo: { hasNextPage: false, endCursor: null },
                  };
                },
              };
            },
          },
    markPullRequestReadyForReview: ({ input }: { input: { pullRequestId: string } }) => {
      if (!mayWrite) denied();
      const pull = state.pulls.find((p) => `PR_${p.id}` === input.pullRequestId);
      if (!pull)
        throw new Error(`Could not resolve to a node with the global id of '${input.pullRequestId}'`);
      pull.draft = false;
      pull.updatedAt = new Date().toISOString();
      return {
        pullRequest: {
          __typename: 'PullRequest',
          id: input.pullRequestId,
          number: pull.number,
          isDraft: false,
        },
      };
    },
    resolveReviewThread: ({ input }: { input: { threadId: string } }) => {
      if (!mayWrite) denied();
      state.resolvedThreads.add(input.threadId);
      return { thread: { __typename: 'PullRequestReviewThread', id: input.threadId, isResolved: true } };
    },
  };
}

export async function runGraphQL(
  state: GraphQLState,
  viewer: UserRecord,
  body: unknown,
): Promise<GraphQLOutcome> {
  const request = (body ?? {}) as { query?: unknown; variables?: unknown };
  if (typeof request.query !== 'string') {
    const message = 'A query attribute must be specified and must be a string.';
    return { status: 422, body: { message }, violations: [message] };
  }
  const schema = githubGraphQLSchema();
  let document;
  try {
    document = parse(request.query);
  } catch (err) {
    const message = String(err);
    return { status: 422, body: { message }, violations: [`graphql: ${message}`] };
  }
  const invalid = validate(schema, document);
  if (invalid.length > 0) {
    const messages = invalid.map((e) => e.message);
    return { status: 422, body: { message: messages.join('; '), errors: invalid }, violations: messages };
  }
  const result = await execute({
    schema,
    document,
    rootValue: rootFor(state, viewer),
    variableValues: (request.variables ?? {}) as Record<string, unknown>,
  });
  const violations = (result.errors ?? [])
    .map((e) => e.message)
    .filter((m) => /Cannot return null for non-nullable|Variable|Expected|cannot represent/i.test(m))
    .map((m) => `graphql answer: ${m}`);
  return { status: 200, body: result, violations };
}
