/** Tests that set process.env for in-process workers put it back as it was afterwards. */

/** Remembers the current values of `keys`; the returned function restores them (unset ones are deleted). */
export function saveEnv(keys: readonly string[]): () => void {
  const saved = Object.fromEntries(keys.map((key) => [key, process.env[key]]));
  return () => {
    for (const key of keys) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  };
}
