/** What `saga start` says before it starts about the modes the agent profile cannot honour. */
import type { SagaConfig } from '../../domain/config/config';
import { resolveAgentProfile } from '../../domain/config/profile-resolution';
import type { FlagsResult } from '../../domain/contract/flags-result';
import { resolveRunModes } from '../../domain/request/run-modes';

/**
 * The refusals the saga will announce once it runs (a profile that sets `subagent_dispatch: false` refuses
 * `--subagents`), said up front so the "Modes:" line is never the whole story; none for an unknown agent
 * (refused elsewhere).
 */
export function modeRefusals(config: SagaConfig, agent: string | undefined, flags: FlagsResult): string[] {
  const profileName = agent ?? config.default_agent;
  let subagentDispatch: boolean;
  try {
    subagentDispatch = resolveAgentProfile(config, profileName).subagentDispatch;
  } catch {
    return [];
  }
  return resolveRunModes(flags, { profileName, subagentDispatch }).notes;
}
