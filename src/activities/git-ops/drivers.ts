/**
 * The user's filter, diff and merge drivers, switched off for every git command the worker runs.
 */
import { runCommand } from '../process/command-helper';
import { GitError, gitEnv, SAFE_GIT_CONFIG } from './git-settings';

/** Config keys that define a filter, diff or merge driver (the driver's name is the middle part). */
const DRIVER_KEYS = /^(filter|diff|merge)\.(.+)\.(clean|smudge|process|required|textconv|command|driver)$/;
const DRIVER_KEY_PATTERN =
  '^(filter|diff|merge)\\..+\\.(clean|smudge|process|required|textconv|command|driver)$';
/** A merge driver's stand-in: git's own text merge, run as the documented external-driver command. */
const TEXT_MERGE = 'git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B';

/** The overrides that switch off every driver the keys name. */
function overridesFor(keys: string[]): Map<string, string> {
  const overrides = new Map<string, string>();
  for (const key of keys) {
    const match = DRIVER_KEYS.exec(key);
    if (!match) continue;
    const [, kind, name] = match;
    if (kind === 'filter') {
      // An empty command runs no filter; `required` off, so the file passes through unfiltered.
      for (const v of ['clean', 'smudge', 'process']) overrides.set(`filter.${name}.${v}`, '');
      overrides.set(`filter.${name}.required`, 'false');
    } else if (kind === 'diff') {
      // Empty: git refuses to run it (fails closed); the worker's own diffs never need a textconv.
      for (const v of ['textconv', 'command']) overrides.set(`diff.${name}.${v}`, '');
    } else {
      overrides.set(`merge.${name}.driver`, TEXT_MERGE);
    }
  }
  return overrides;
}

/**
 * Every filter, diff and merge driver the user's configuration defines (system, global, repository),
 * switched off: an agent's `.gitattributes` decides which files go through which driver, so a clean or
 * smudge filter (LFS too), a textconv or a merge driver would otherwise run, unconfined, on files an agent
 * chose. Disabled by name, whatever attributes file names it, through GIT_CONFIG_COUNT, which takes any
 * key and reaches the git processes git itself starts. A nested repository's own drivers never come into
 * play: its git never runs (nested-repos.ts, submodule.recurse off).
 */
export async function driverOverrides(cwd: string): Promise<NodeJS.ProcessEnv> {
  const args = [...SAFE_GIT_CONFIG, 'config', '-z', '--name-only', '--get-regexp', DRIVER_KEY_PATTERN];
  const out = await runCommand('git', args, {
    cwd,
    env: gitEnv(),
    maxBuffer: 1024 * 1024,
    timeoutMs: 60_000,
  });
  if (out.code !== 0 && out.code !== 1) {
    // Fail closed: no command runs with drivers left on.
    const why = out.code === null ? `${out.failure ?? 'killed'}\n${out.stderr}` : out.stderr;
    throw new GitError(['config', '--get-regexp', DRIVER_KEY_PATTERN], cwd, out.code, why);
  }
  const overrides = overridesFor(out.stdout.split('\0').filter(Boolean));
  const env: NodeJS.ProcessEnv = {};
  [...overrides].forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  if (overrides.size > 0) env.GIT_CONFIG_COUNT = String(overrides.size);
  return env;
}

/**
 * The user's drivers change rarely and no agent can write their config: read once per folder and reused
 * briefly, so a handoff's many commands pay for one read, not one per command.
 */
const DRIVER_CACHE_MS = 30_000;
const DRIVER_CACHE_SIZE = 256;
const driverCache = new Map<string, { at: number; env: Promise<NodeJS.ProcessEnv> }>();

export function cachedDriverOverrides(cwd: string): Promise<NodeJS.ProcessEnv> {
  const hit = driverCache.get(cwd);
  if (hit && Date.now() - hit.at < DRIVER_CACHE_MS) return hit.env;
  if (driverCache.size >= DRIVER_CACHE_SIZE) driverCache.clear();
  const env = driverOverrides(cwd);
  driverCache.set(cwd, { at: Date.now(), env });
  env.catch(() => driverCache.delete(cwd));
  return env;
}

/** Forgets the drivers read so far (tests that change the user's config between commands). */
export function forgetDriverOverrides(): void {
  driverCache.clear();
}
