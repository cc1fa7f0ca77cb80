/** What the parsed flags resolve to on this host: the execution mode, the lanes, and the announcement made before any work starts. Pure. */
import { z } from 'zod';
import { FLAG_VOCABULARY, flagName } from './flags';
import type { FlagsResult } from '../contract/flags-result';

export const ExecutionModeResolutionSchema = z.object({
  mode: z.enum(['subagents', 'inline']),
  /** True only when subagents were requested and refused. */
  degraded: z.boolean(),
  manifestValue: z.enum(['subagents', 'inline', 'inline (subagents-unavailable)']),
  /** What to say out loud, or null when there is nothing to say. */
  announcement: z.string().nullable(),
});
export type ExecutionModeResolution = z.infer<typeof ExecutionModeResolutionSchema>;

/**
 * Subagents is a capability, not a policy: a request the agent profile cannot honour is refused
 * loudly (announced, recorded), never silently downgraded. Read the mode from here, not the flag.
 */
export function resolveExecutionMode(
  requestedSubagents: boolean,
  capabilities: { subagentDispatch: boolean; profileName?: string },
): ExecutionModeResolution {
  if (!requestedSubagents) {
    return { mode: 'inline', degraded: false, manifestValue: 'inline', announcement: null };
  }
  if (capabilities.subagentDispatch) {
    return { mode: 'subagents', degraded: false, manifestValue: 'subagents', announcement: null };
  }
  const who = capabilities.profileName
    ? `the agent profile '${capabilities.profileName}'`
    : 'the agent profile';
  return {
    mode: 'inline',
    degraded: true,
    manifestValue: 'inline (subagents-unavailable)',
    announcement:
      `Subagent execution is unavailable: ${who} sets subagent_dispatch: false (its runs cannot be fresh ` +
      'sessions). ' +
      'Falling back to inline execution — implementation and review will share one context, so ' +
      'per-task review is NOT independent. Recorded in decisions.md.',
  };
}

export const ParallelResolutionSchema = z.object({
  /** Effective lanes; 1 means sequential. */
  lanes: z.number().int().min(1).max(FLAG_VOCABULARY.maxLanes),
  /** True only when parallel was requested and cannot run (a saga started before any profile could). */
  degraded: z.boolean(),
  manifestValue: z.string(),
  announcement: z.string().nullable(),
});
export type ParallelResolution = z.infer<typeof ParallelResolutionSchema>;

/**
 * Lanes are a policy: the saga dispatches every task as its own process in its own worktree, so any
 * profile runs the lanes asked for, whatever the execution mode.
 */
export function resolveParallel(flags: FlagsResult): ParallelResolution {
  if (!flags.parallel) {
    return { lanes: 1, degraded: false, manifestValue: 'sequential', announcement: null };
  }
  const lanes = Math.min(Math.max(flags.parallel_lanes, 1), FLAG_VOCABULARY.maxLanes);
  return {
    lanes,
    degraded: false,
    manifestValue: `parallel (${lanes} ${lanes === 1 ? 'lane' : 'lanes'})`,
    announcement: null,
  };
}

/**
 * The earlier rule, kept only so that sagas started under it replay unchanged: lanes existed only inside
 * subagent execution, and without it the saga ran sequentially, loudly.
 */
export function resolveParallelRequiringSubagents(
  flags: FlagsResult,
  executionMode: 'subagents' | 'inline',
): ParallelResolution {
  if (!flags.parallel || executionMode === 'subagents') return resolveParallel(flags);
  return {
    lanes: 1,
    degraded: true,
    manifestValue: 'sequential (parallel-requires-subagents)',
    announcement:
      'Parallel lanes are unavailable: --parallel requires subagent execution, and this saga ' +
      'resolved to inline execution. Running tasks sequentially — recorded in decisions.md.',
  };
}

/**
 * The announcement made before any work starts (the flags contract, "After Parsing"): the workflow line, the
 * active modes (line omitted when none), any clamp note, then the goal. On an error: the error verbatim.
 */
export function announceModes(
  flags: FlagsResult,
  options: { product?: string; workflow?: string } = {},
): string {
  const product = options.product ?? 'Sage';
  if (flags.error !== null) return `${product}: ${flags.error}`;
  const modes = FLAG_VOCABULARY.keys
    .filter((key) => flags[key])
    .map((key) => (key === 'parallel' ? `--parallel=${flags.parallel_lanes}` : flagName(key)));
  const lines = [`${product} → ${options.workflow ?? 'build'} workflow.`];
  if (modes.length > 0) lines.push(`Modes: ${modes.join(', ')}`);
  if (flags.parallel_note !== null) lines.push(`Note: ${flags.parallel_note}`);
  lines.push(`Goal: ${flags.goal}`);
  return lines.join('\n');
}
