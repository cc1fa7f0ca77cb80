/**
 * Saga-level activities: the run settings fixed at start, the saga directory's first files, and the
 * audit trail of automatic decisions (written BEFORE the action they record).
 */
import { Context } from '@temporalio/activity';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { withSecretsOutOfHistory } from '../domain/config/agent-env';
import {
  checkTimeoutMs,
  handoffSettings,
  heartbeatTimeoutMs,
  knownAgentNames,
  resolveAgentProfile,
} from '../domain/config/config';
import type { FlagsResult } from '../domain/request/flags';
import type { RunSettings } from '../domain/saga/saga-input';
import type { createArtifactActivities } from './artifacts';
import { loadSagaConfig } from './config-loader';
import { recordSagaAnswers } from './progress';

type Artifacts = ReturnType<typeof createArtifactActivities>;

/** What the autonomous planner is given before it decides anything (seed 001 pre-flight). */
export interface PlanningContext {
  files: { path: string; excerpt: string }[];
  /** Titles of the latest decisions.md entries (this saga's, then the repo's `.sage/decisions.md`). */
  priorDecisions: string[];
}
const PREFLIGHT_FILES = [
  '.sage/conventions.md',
  '.sage/constitution.md',
  'CONVENTIONS.md',
  'CONSTITUTION.md',
  'PRINCIPLES.md',
];
const PREFLIGHT_EXCERPT = 2_000;
const PRIOR_DECISIONS = 20;

/** A file's text, or null when it is missing, not a file or too large to be a conventions file. */
async function readSmall(file: string): Promise<string | null> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile() || stat.size > 1024 * 1024) return null;
    return await fs.readFile(file, 'utf8');
  } catch {
    return null;
  }
}
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
      const { config, source } = await loadSagaConfig(input);
      const profiles: RunSettings['profiles'] = {};
      const subagentDispatch: RunSettings['subagentDispatch'] = {};
      const agentTimeoutMs: RunSettings['agentTimeoutMs'] = {};
      for (const name of knownAgentNames(config)) {
        const profile = resolveAgentProfile(config, name);
        // This result is recorded in history: secrets stay references, read back by the agent's activity.
        profiles[name] = withSecretsOutOfHistory(profile, source);
        subagentDispatch[name] = profile.subagentDispatch;
        agentTimeoutMs[name] = profile.timeoutMs;
      }
      return {
        attempts: config.attempts,
        checkTimeoutMs: checkTimeoutMs(config),
        heartbeatTimeoutMs: heartbeatTimeoutMs(config),
        defaultAgent: config.default_agent,
        profiles,
        subagentDispatch,
        agentTimeoutMs,
        worktree: {
          copy: config.worktree.copy,
          setup: config.worktree.setup,
          portRangeSize: config.worktree.port_range_size,
        },
        budget: {
          taskUsd: config.budget.task_usd ?? null,
          sagaUsd: config.budget.saga_usd ?? null,
          onExhausted: config.budget.on_exhausted,
        },
        handoff: handoffSettings(config),
        passEnv: config.pass_env,
        sandbox: { mode: config.sandbox, network: config.network },
      };
    },

    /**
     * manifest.md with the flags and modes, plus one decisions.md entry per loud degradation (seed 000:
     * `execution_mode` is exactly the mode value, e.g. `inline (subagents-unavailable)`; lanes go apart).
     */
    async initSagaDir(input: {
      sagaDir: string;
      name: string;
      flags: FlagsResult;
      executionMode: string;
      parallelMode: string;
      degradations: { title: string; text: string }[];
    }): Promise<void> {
      const { goal: _goal, error: _error, ...flags } = input.flags;
      await artifacts.updateManifest({
        sagaDir: input.sagaDir,
        patch: {
          saga: input.name,
          flags,
          execution_mode: input.executionMode,
          parallel_mode: input.parallelMode,
        },
      });
      for (const { title, text } of input.degradations) {
        await artifacts.prependDecision({
          sagaDir: input.sagaDir,
          entry: { at: new Date().toISOString(), title, lines: [text] },
        });
      }
    },

    /**
     * Seed 001 pre-flight context for the autonomous planner: repo conventions, constitution/principles and
     * prior decisions, when present. Excerpts are short (history stays small); the planner reads the files.
     */
    async gatherPlanningContext(input: {
      repo: string;
      sagaDir: string;
      sagaWorkflowId: string;
    }): Promise<PlanningContext> {
      await recordSagaAnswers(artifacts, {
        client: Context.current().client,
        sagaDir: input.sagaDir,
        workflowId: input.sagaWorkflowId,
      });
      const found: PlanningContext['files'] = [];
      for (const rel of PREFLIGHT_FILES) {
        const text = await readSmall(path.join(input.repo, rel));
        if (text !== null) found.push({ path: rel, excerpt: text.slice(0, PREFLIGHT_EXCERPT) });
      }
      const priorDecisions: string[] = [];
      for (const file of [
        path.join(input.sagaDir, 'decisions.md'),
        path.join(input.repo, '.sage', 'decisions.md'),
      ]) {
        const text = await readSmall(file);
        if (text === null) continue;
        // Newest first: the first entries are the latest ones.
        const titles = text
          .split(/^### /m)
          .slice(1)
          .map((entry) => entry.split('\n')[0]!.trim());
        priorDecisions.push(...titles.slice(0, PRIOR_DECISIONS - priorDecisions.length));
      }
      return { files: found, priorDecisions };
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
