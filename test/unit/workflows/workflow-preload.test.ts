/**
 * src/workflows/preload.ts loads the domain modules once per worker, shared by every workflow. A domain
 * module a workflow imports and the list misses still works (each workflow evaluates it again), but pays
 * the per-workflow cost the list exists to avoid: the list names every one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { fillSchemaCaches } from '../../../src/workflows/preload';
import { PROJECT_ROOT } from '../../../src/project-root';

const WORKFLOWS = path.resolve(PROJECT_ROOT, 'src', 'workflows');
const domainImports = (file: string): string[] =>
  [...readFileSync(path.join(WORKFLOWS, file), 'utf8').matchAll(/from '(?:\.\.\/)+domain\/([\w/-]+)'/g)].map(
    (m) => m[1]!,
  );
/** The workflow modules, phase folders included, relative to src/workflows. */
const workflowModules = (): string[] =>
  (readdirSync(WORKFLOWS, { recursive: true }) as string[]).filter(
    (f) => f.endsWith('.ts') && f !== 'preload.ts',
  );

/** The messages contract holds no schema, and it calls the SDK's define* functions: it is not preloaded. */
const NOT_PRELOADED = new Set(['saga/messages']);

describe('the workflow modules loaded once per worker', () => {
  test('include every domain module a workflow imports', () => {
    const used = new Set(workflowModules().flatMap(domainImports));
    expect(workflowModules().filter((f) => f.includes('/')).length).toBeGreaterThan(20); // the phase folders are read
    const preloaded = new Set(domainImports('preload.ts'));
    expect([...used].filter((m) => !preloaded.has(m) && !NOT_PRELOADED.has(m)).sort()).toEqual([]);
  });

  test('schemas parse after a deep freeze once their caches are filled', () => {
    const pattern = /^[a-z]+$/;
    const schema = z.object({
      id: z.string().regex(pattern),
      kind: z.enum(['a', 'b']),
      level: z.nativeEnum({ Low: 'low', High: 'high' }),
      nested: z.array(z.object({ n: z.number() })).optional(),
    });
    fillSchemaCaches({ schema, pattern });
    // What the SDK does to preloaded modules (it freezes every object reachable from their exports).
    const deepFreeze = (value: unknown, seen = new Set<unknown>()): void => {
      if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value))
        return;
      seen.add(value);
      if (Object.isFrozen(value)) return;
      for (const key of Reflect.ownKeys(value))
        deepFreeze((value as Record<PropertyKey, unknown>)[key], seen);
      Object.freeze(value);
    };
    deepFreeze({ schema, pattern });
    expect(schema.parse({ id: 'abc', kind: 'b', level: 'high', nested: [{ n: 1 }] })).toEqual({
      id: 'abc',
      kind: 'b',
      level: 'high',
      nested: [{ n: 1 }],
    });
    expect(schema.safeParse({ id: 'A1', kind: 'c', level: 'mid' }).success).toBe(false);
  });
});
