/**
 * Saga-level activities: the run settings fixed at start, the saga directory's first files, and the
 * audit trail of automatic decisions (written BEFORE the action they record).
 */
import { checkTimeoutMs, knownAgentNames, resolveAgentProfile } from '../domain/config';
import type { FlagsResult } from '../domain/flags';
import type { RunSettings } from '../domain/saga-input';
import type { createArtifactActivities } from './artifacts';
import { loadSagaConfig } from './config-loader';

type Artifacts = ReturnType<typeof createArtifactActivities>;
const FLAG_KEYS = ['quality_locked', 'autonomous', 'subagents', 'parallel'] as const;
const flagName = (key: string) => `--${key.replace('_', '-')}`;

export function createSagaSetupActivities(deps: { artifacts: Artifacts }) {
  const { artifacts } = deps;
  return {
    /** Reads saga.config.yaml once; the result is recorded in history so replays never re-read it. */
    async loadRunSettings(input: {
      repo: string;
      sagaHome: string;
      configFile?: string;
    }): Promise<RunSettings> {
      const { config } = await loadSagaConfig(input);
      const profiles: RunSettings['profiles'] = {};
      const subagentDispatch: RunSettings['subagentDispatch'] = {};
      const agentTimeoutMs: RunSettings['agentTimeoutMs'] = {};
      for (const name of knownAgentNames(config)) {
        const profile = resolveAgentProfile(config, name);
        profiles[name] = profile;
        subagentDispatch[name] = profile.subagentDispatch;
        agentTimeoutMs[name] = profile.timeoutMs;
      }
      return {
        attempts: config.attempts,
        checkTimeoutMs: checkTimeoutMs(config),
        defaultAgent: config.default_agent,
        profiles,
        subagentDispatch,
        agentTimeoutMs,
        worktree: {
          copy: config.worktree.copy,
          setup: config.worktree.setup,
          portRangeSize: config.worktree.port_range_size,
        },
        budget: { taskUsd: config.budget.task_usd ?? null, sagaUsd: config.budget.saga_usd ?? null },
      };
    },

    /** manifest.md with the flags and modes, plus one decisions.md line per loud degradation. */
    async initSagaDir(input: {
      sagaDir: string;
      name: string;
      flags: FlagsResult;
      executionMode: string;
      parallelMode: string;
      degradations: string[];
    }): Promise<void> {
      const { goal: _goal, error: _error, ...flags } = input.flags;
      await artifacts.updateManifest({
        sagaDir: input.sagaDir,
        patch: { saga: input.name, flags, execution_mode: `${input.executionMode}; ${input.parallelMode}` },
      });
      for (const text of input.degradations) {
        await artifacts.prependDecision({
          sagaDir: input.sagaDir,
          entry: { at: new Date().toISOString(), title: 'Degraded execution mode', lines: [text] },
        });
      }
    },

    /** Seed 001 logging contract for an auto-picked [A] Review: manifest entry and decisions.md entry. */
    async logAutoPick(input: {
      sagaDir: string;
      phase: string;
      checkpoint: string;
      flags: FlagsResult;
    }): Promise<void> {
      const at = new Date().toISOString();
      const active = FLAG_KEYS.filter((k) => k === 'quality_locked' || k === 'autonomous');
      const sources = Object.fromEntries(active.map((k) => [k, input.flags[`${k}_source`]]));
      await artifacts.updateManifest({
        sagaDir: input.sagaDir,
        append: true,
        patch: {
          auto_picked_checkpoints: [
            {
              phase: input.phase,
              checkpoint: input.checkpoint,
              decision: 'A',
              timestamp: at,
              reason: '--autonomous --quality-locked both active',
              flag_sources: sources,
            },
          ],
        },
      });
      const hints = active
        .map((k) => {
          const source = input.flags[`${k}_source`];
          if (source === 'config')
            return `pass --no-${k.replace('_', '-')} to opt out of the .sage/config.yaml default for one run`;
          if (source === 'flag') return `omit ${flagName(k)} to disable the flag`;
          return null;
        })
        .filter(Boolean);
      await artifacts.prependDecision({
        sagaDir: input.sagaDir,
        entry: {
          at,
          title: `Auto-pick: [A] Review at ${input.checkpoint} checkpoint`,
          lines: [
            `Flags active: ${active.map((k) => `${flagName(k)} (${input.flags[`${k}_source`] ?? 'off'})`).join(', ')}`,
            `Effect: Triggered quality-locked review loop (results in manifest under quality_locked_history).`,
            `Override: ${hints.join('; ')}.`,
          ],
        },
      });
    },
  };
}
