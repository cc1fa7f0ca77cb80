/**
 * Applies a status delta (src/client/board/delta.ts computes it on the server): `[path, value]` sets, `[path]`
 * deletes. Only the objects on a changed path are copied; the rest is shared with the old value, so a lane
 * whose milestone did not change keeps the same object and need not be drawn again.
 */
export function applyDelta(value, ops) {
  let root = value;
  for (const op of ops) root = setIn(root, op[0], 0, op.length === 1, op[1]);
  return root;
}

function setIn(node, path, at, remove, value) {
  if (at === path.length) return value;
  const key = path[at];
  const copy = Array.isArray(node) ? node.slice() : { ...node };
  if (remove && at === path.length - 1) delete copy[key];
  else copy[key] = setIn(copy[key], path, at + 1, remove, value);
  return copy;
}
