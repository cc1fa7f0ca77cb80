/**
 * GitHub's published OpenAPI description (npm `@octokit/openapi`, api.github.com) as a validator for the
 * GitHub stand-in: finds the operation a request is for and checks its path and query parameters, its body
 * and the stand-in's response against the description with ajv. Nothing here is hand-written schema.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Json;
}

export interface Operation {
  id: string;
  method: string;
  template: string;
  pointer: string;
  literalSegments: number;
  regex: RegExp;
  names: string[];
  parameters: Parameter[];
  hasBody: boolean;
  bodyRequired: boolean;
}

const escapePointer = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

function loadDescription(): Json {
  const pkg = require.resolve('@octokit/openapi/package.json');
  const file = path.join(path.dirname(pkg), 'generated', 'api.github.com.json');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as Json;
  normaliseNullable(doc);
  return doc;
}

/**
 * OpenAPI 3.0's `nullable` beside a `oneOf`/`anyOf` but no `type` (e.g. issues/create's `milestone`) means
 * "or null"; ajv knows `nullable` only next to `type`, so such a schema is rewritten as `anyOf [it, null]`.
 */
function normaliseNullable(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(normaliseNullable);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const obj = node as Json;
  Object.values(obj).forEach(normaliseNullable);
  if (obj.nullable === true && obj.type === undefined && obj.$ref === undefined) {
    const { nullable: _nullable, description, ...rest } = obj;
    for (const key of Object.keys(obj)) delete obj[key];
    Object.assign(obj, { ...(description ? { description } : {}), anyOf: [rest, { type: 'null' }] });
  }
}

function resolvePointer(doc: Json, ref: string): Json {
  let node: unknown = doc;
  for (const raw of ref.replace(/^#\//, '').split('/')) {
    node = (node as Json)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node as Json;
}

const deref = (doc: Json, node: Json): Json =>
  typeof node.$ref === 'string' ? deref(doc, resolvePointer(doc, node.$ref)) : node;

const formatErrors = (where: string, v: ValidateFunction): string[] =>
  (v.errors ?? []).map((e) => `${where}${e.instancePath || ''} ${e.message ?? e.keyword}`);

export class GitHubDescription {
  private readonly doc: Json = loadDescription();
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly params = new Ajv({ strict: false, allErrors: true, coerceTypes: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  readonly operations: Operation[] = [];

  constructor() {
    // GitHub's own formats beside the standard ones: `owner/name`, and a Unix time (left unchecked).
    for (const ajv of [this.ajv, this.params]) {
      addFormats(ajv);
      ajv.addFormat('repo.nwo', /^[^/\s]+\/[^/\s]+$/);
      ajv.addFormat('timestamp', true);
    }
    this.ajv.addSchema(this.doc, 'gh');
    this.params.addSchema(this.doc, 'gh');
    const paths = this.doc.paths as Record<string, Record<string, Json>>;
    for (const [template, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (typeof op.operationId !== 'string') continue;
        const names: string[] = [];
        const source = template
          .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
          .replace(/\{([^}]+)\}/g, (_m, n: string) => {
            names.push(n);
            return '([^/]+)';
          });
        const body = op.requestBody ? deref(this.doc, op.requestBody as Json) : undefined;
        this.operations.push({
          id: op.operationId,
          method: method.toUpperCase(),
          template,
          pointer: `gh#/paths/${escapePointer(template)}/${method}`,
          literalSegments: template.split('/').filter((s) => s && !s.startsWith('{')).length,
          regex: new RegExp(`^${source}$`),
          names,
          parameters: ((op.parameters ?? []) as Json[]).map(
            (p) => deref(this.doc, p) as unknown as Parameter,
          ),
          hasBody: body !== undefined,
          bodyRequired: body?.required === true,
        });
      }
    }
    // Literal segments win over parameters (`/pulls/comments` before `/pulls/{pull_number}`).
    this.operations.sort((a, b) => b.literalSegments - a.literalSegments);
  }

  /** The operation a request is for, with its path parameters, or null when the description has none. */
  match(method: string, pathname: string): { op: Operation; pathParams: Record<string, string> } | null {
    for (const op of this.operations) {
      if (op.method !== method) continue;
      const m = op.regex.exec(pathname);
      if (!m) continue;
      const pathParams: Record<string, string> = {};
      op.names.forEach((n, i) => (pathParams[n] = decodeURIComponent(m[i + 1])));
      return { op, pathParams };
    }
    return null;
  }

  private validator(pointer: string): ValidateFunction {
    let v = this.compiled.get(pointer);
    if (!v) {
      v = this.ajv.compile({ $ref: pointer });
      this.compiled.set(pointer, v);
    }
    return v;
  }

  /** What is wrong with a request, by the description: [] when it conforms. */
  checkRequest(
    op: Operation,
    pathParams: Record<string, string>,
    query: URLSearchParams,
    body: unknown,
  ): string[] {
    const errors: string[] = [];
    const known = new Set(op.parameters.map((p) => `${p.in}:${p.name}`));
    for (const name of new Set(query.keys())) {
      if (!known.has(`query:${name}`)) errors.push(`query parameter '${name}' is not in ${op.id}`);
    }
    op.parameters.forEach((p) => {
      if (p.in !== 'path' && p.in !== 'query') return;
      const value = p.in === 'path' ? pathParams[p.name] : (query.get(p.name) ?? undefined);
      if (value === undefined) {
        if (p.required) errors.push(`${p.in} parameter '${p.name}' is required by ${op.id}`);
        return;
      }
      const v = this.paramValidator(op, op.parameters.indexOf(p));
      if (!v({ value })) errors.push(...formatErrors(`${p.in} parameter '${p.name}'`, v));
    });
    if (op.hasBody) {
      if (body === null || body === undefined) {
        if (op.bodyRequired) errors.push(`${op.id} requires a request body`);
      } else {
        const v = this.validator(`${op.pointer}/requestBody${this.bodyTail(op)}`);
        if (!v(body)) errors.push(...formatErrors('request body', v));
      }
    } else if (body !== null && body !== undefined && body !== '') {
      errors.push(`${op.id} takes no request body`);
    }
    return errors;
  }

  /** Query and path values are strings on the wire: checked coerced, inside a holder object. */
  private paramValidator(op: Operation, index: number): ValidateFunction {
    const key = `param:${op.pointer}:${index}`;
    let v = this.compiled.get(key);
    if (!v) {
      const raw = (resolvePointer(this.doc, op.pointer.slice(2)).parameters as Json[])[index];
      const ref =
        typeof raw.$ref === 'string' ? `gh${raw.$ref}/schema` : `${op.pointer}/parameters/${index}/schema`;
      v = this.params.compile({ type: 'object', properties: { value: { $ref: ref } } });
      this.compiled.set(key, v);
    }
    return v;
  }

  private bodyTail(op: Operation): string {
    const raw = resolvePointer(this.doc, `${op.pointer.slice(2)}/requestBody`);
    if (typeof raw.$ref === 'string') throw new Error(`${op.id}: a $ref request body is not handled`);
    return '/content/application~1json/schema';
  }

  /** What is wrong with a response the stand-in is about to send: [] when the description allows it. */
  checkResponse(op: Operation, status: number, body: unknown): string[] {
    const responses = resolvePointer(this.doc, `${op.pointer.slice(2)}/responses`);
    const declared = responses[String(status)] as Json | undefined;
    // GitHub answers any GET conditionally (304, no body), any call without a valid token with 401 and any
    // missing resource with 404; the description leaves these to its general docs ("conditional requests",
    // "authentication", "troubleshooting") for many operations. Their bodies are basic errors.
    if (!declared && status === 304)
      return body === null || body === undefined ? [] : ['304 carries no body'];
    if (!declared && (status === 401 || status === 404)) {
      const v = this.validator('gh#/components/schemas/basic-error');
      return v(body) ? [] : formatErrors(`${op.id} ${status} response`, v);
    }
    if (!declared)
      return [`${op.id} declares no ${status} response (it declares ${Object.keys(responses).join(', ')})`];
    const base =
      typeof declared.$ref === 'string' ? `gh${declared.$ref}` : `${op.pointer}/responses/${status}`;
    const content = deref(this.doc, declared).content as Json | undefined;
    if (!content || !content['application/json']) {
      return body === null || body === undefined ? [] : [`${op.id} ${status} has no body in the description`];
    }
    const v = this.validator(`${base}/content/application~1json/schema`);
    return v(body) ? [] : formatErrors(`${op.id} ${status} response`, v);
  }
}
