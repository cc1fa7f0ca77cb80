/**
 * The Linear stand-in's GraphQL endpoint: each document is parsed and validated against Linear's published
 * schema (test/fixtures/linear/schema.graphql, built with graphql's own `buildSchema`), then executed by
 * graphql against that same schema, so an answer has the schema's types by construction. A field the
 * records leave out gets a placeholder of its type when the schema says it is never null (the SDK's
 * fragments ask for dozens of fields the adapter never reads); anything the schema or the stand-in rejects
 * that is not one of Linear's own refusals is a violation the tests assert empty.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type GraphQLFieldResolver,
  type GraphQLOutputType,
  type GraphQLSchema,
  buildSchema,
  execute,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  parse,
  validate,
} from 'graphql';
import { rootFor, type Served } from './resolvers';

export const LINEAR_SCHEMA_FILE = path.resolve(__dirname, '../../fixtures/linear/schema.graphql');

let cached: GraphQLSchema | undefined;
export const linearSchema = (): GraphQLSchema =>
  (cached ??= buildSchema(readFileSync(LINEAR_SCHEMA_FILE, 'utf8')));

const SCALAR_PLACEHOLDERS: Record<string, unknown> = {
  String: '',
  ID: '00000000-0000-4000-8000-000000000000',
  Int: 0,
  Float: 0,
  Boolean: false,
  DateTime: '2026-01-01T00:00:00.000Z',
  TimelessDate: '2026-01-01',
  JSON: {},
  JSONObject: {},
};

/** A value of a never-null type the records do not hold; null for a nullable one. */
function placeholder(type: GraphQLOutputType): unknown {
  if (!isNonNullType(type)) return null;
  const inner = type.ofType;
  if (isListType(inner)) return [];
  if (isEnumType(inner)) return inner.getValues()[0]?.value;
  if (isScalarType(inner)) return SCALAR_PLACEHOLDERS[inner.name] ?? '';
  if (isObjectType(inner)) return {};
  return null; // an interface or union left out: graphql reports it, and so a violation
}

const fieldResolver: GraphQLFieldResolver<unknown, unknown> = (source, args, _ctx, info) => {
  const value = (source as Record<string, unknown> | null)?.[info.fieldName];
  if (typeof value === 'function') return (value as (a: unknown) => unknown)(args);
  return value === undefined ? placeholder(info.returnType) : value;
};

export interface GraphQLOutcome {
  status: number;
  body: unknown;
  /** The operation's name (`sagaIssue`, `createComment`), for counting calls. */
  operation: string;
  violations: string[];
}

const gqlError = (message: string, type = 'graphql error') => ({
  message,
  extensions: { type, code: 'GRAPHQL_VALIDATION_FAILED', userPresentableMessage: message },
});

export async function runGraphQL(served: Served, body: unknown): Promise<GraphQLOutcome> {
  const request = (body ?? {}) as { query?: unknown; variables?: unknown; operationName?: unknown };
  if (typeof request.query !== 'string') {
    const message = 'Must provide query string.';
    return { status: 400, body: { errors: [gqlError(message)] }, operation: '?', violations: [message] };
  }
  let document;
  try {
    document = parse(request.query);
  } catch (err) {
    const message = `graphql: ${String(err)}`;
    return { status: 400, body: { errors: [gqlError(message)] }, operation: '?', violations: [message] };
  }
  const op = document.definitions.find((d) => d.kind === 'OperationDefinition');
  const operation = (op && 'name' in op && op.name?.value) || '(anonymous)';
  const schema = linearSchema();
  const invalid = validate(schema, document);
  if (invalid.length > 0) {
    const messages = invalid.map((e) => e.message);
    return {
      status: 400,
      body: { errors: messages.map((m) => gqlError(m)) },
      operation,
      violations: messages.map((m) => `${operation}: ${m}`),
    };
  }
  const result = await execute({
    schema,
    document,
    rootValue: rootFor(served),
    fieldResolver,
    variableValues: (request.variables ?? {}) as Record<string, unknown>,
  });
  // Linear's own refusals carry `extensions.type`; any other error is the schema's or the stand-in's.
  const violations = (result.errors ?? [])
    .filter((e) => typeof e.extensions?.type !== 'string')
    .map((e) => `${operation}: ${e.message}`);
  violations.push(...served.gaps.missing.splice(0).map((m) => `${operation}: ${m}`));
  return { status: 200, body: result, operation, violations };
}
