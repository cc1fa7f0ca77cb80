/**
 * What changed between two JSON values (a saga's board view), as a list of operations the page applies
 * (public/delta.js): a status event of a 1,000-task saga is ~330 KB, a task's change is a few hundred bytes.
 */

export type DeltaPath = (string | number)[];
/** `[path, value]` sets the value at the path; `[path]` deletes the key there. */
export type DeltaOp = [DeltaPath, unknown] | [DeltaPath];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The operations that turn `before` into `after`: objects are compared key by key, arrays of the same length
 * item by item; anything else that differs (an array that grew or shrank, a changed type) is set whole.
 */
export function jsonDelta(
  before: unknown,
  after: unknown,
  path: DeltaPath = [],
  ops: DeltaOp[] = [],
): DeltaOp[] {
  if (before === after) return ops;
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(after))
      if (key in before) jsonDelta(before[key], after[key], [...path, key], ops);
      else ops.push([[...path, key], after[key]]);
    for (const key of Object.keys(before)) if (!(key in after)) ops.push([[...path, key]]);
    return ops;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    after.forEach((item, i) => jsonDelta(before[i], item, [...path, i], ops));
    return ops;
  }
  ops.push([path, after]);
  return ops;
}

/** The same as public/delta.js's `applyDelta` (the page's), for the server's own checks and tests. */
export function applyDelta<T>(value: T, ops: readonly DeltaOp[]): T {
  let root: unknown = value;
  for (const op of ops) root = setIn(root, op[0], 0, op.length === 1, op[1]);
  return root as T;
}

function setIn(node: unknown, path: DeltaPath, at: number, remove: boolean, value: unknown): unknown {
  if (at === path.length) return value;
  const key = path[at]!;
  const copy = (Array.isArray(node) ? [...(node as unknown[])] : { ...(node as object) }) as Record<
    string | number,
    unknown
  >;
  if (remove && at === path.length - 1) delete copy[key];
  else copy[key] = setIn(copy[key], path, at + 1, remove, value);
  return copy;
}
