import { readFileSync, statSync } from 'node:fs';
import { parseConfigDefaults, type ConfigDefaults } from '../domain/request/flags';

/**
 * Flag defaults from a `.sage/config.yaml`-style file. Fail-soft by contract: no path, a missing or
 * unreadable file, a directory, or bytes that are not UTF-8 all mean "no defaults", never a crash.
 */
export function loadSageConfigDefaults(path: string | undefined): ConfigDefaults {
  if (!path) return {};
  try {
    if (!statSync(path).isFile()) return {};
    // fatal: invalid UTF-8 is a malformed config (no defaults), not text to guess at.
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(readFileSync(path));
    return parseConfigDefaults(text);
  } catch {
    return {};
  }
}
