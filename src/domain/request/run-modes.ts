/**
 * The saga's run modes as intake fixes them: the execution mode (subagents or inline) the agent profile
 * can honour, the parallel lanes asked for (any profile runs them), and what was refused (announced and
 * recorded in the manifest, never silently downgraded). Pure: also runs in workflow code.
 */
import type { FlagsResult } from '../contract/flags-result';
import {
  resolveExecutionMode,
  resolveParallel,
  resolveParallelRequiringSubagents,
  type ExecutionModeResolution,
  type ParallelResolution,
} from './mode-resolution';

export interface RunModes {
  mode: ExecutionModeResolution;
  parallel: ParallelResolution;
  /** What the status shows as the execution mode. */
  label: string;
  /** The refused requests, as the manifest records them. */
  degradations: { title: string; text: string }[];
  /** The announcements of what was refused, for the log. */
  notes: string[];
}

export function resolveRunModes(
  flags: FlagsResult,
  agent: { profileName: string; subagentDispatch: boolean },
  /** False only for a saga started when lanes required subagent execution (its history replays so). */
  parallelAnyProfile = true,
): RunModes {
  const mode = resolveExecutionMode(flags.subagents, {
    subagentDispatch: agent.subagentDispatch,
    profileName: agent.profileName,
  });
  const parallel = parallelAnyProfile
    ? resolveParallel(flags)
    : resolveParallelRequiringSubagents(flags, mode.mode);
  return {
    mode,
    parallel,
    label: `${mode.manifestValue}; ${parallel.manifestValue}`,
    degradations: [
      ...(mode.announcement
        ? [{ title: `Refused --subagents: ${mode.manifestValue}`, text: mode.announcement }]
        : []),
      ...(parallel.announcement
        ? [{ title: `Refused --parallel: ${parallel.manifestValue}`, text: parallel.announcement }]
        : []),
    ],
    notes: [mode.announcement, parallel.announcement].filter((note): note is string => !!note),
  };
}
