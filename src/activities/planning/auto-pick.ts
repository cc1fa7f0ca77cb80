/**
 * The audit trail of an auto-picked [A] Review (both --autonomous and --quality-locked active): a manifest
 * entry and a decisions.md entry, written before the review runs.
 */
import { autoPickOverrideHints } from '../../domain/planning/auto-pick-notice';
import type { FlagsResult } from '../../domain/contract/flags-result';
import type { createArtifactActivities } from '../artifacts';

type Artifacts = ReturnType<typeof createArtifactActivities>;

const FLAG_KEYS = ['quality_locked', 'autonomous', 'subagents', 'parallel'] as const;
const flagName = (key: string) => `--${key.replace('_', '-')}`;

export interface AutoPickInput {
  sagaDir: string;
  phase: string;
  checkpoint: string;
  flags: FlagsResult;
}

export async function logAutoPick(artifacts: Artifacts, input: AutoPickInput): Promise<void> {
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
  await artifacts.prependDecision({
    sagaDir: input.sagaDir,
    entry: {
      at,
      title: `Auto-pick: [A] Review at ${input.checkpoint} checkpoint`,
      lines: [
        `Flags active: ${active.map((k) => `${flagName(k)} (${input.flags[`${k}_source`] ?? 'off'})`).join(', ')}`,
        `Effect: Triggered quality-locked review loop (results in manifest under quality_locked_history).`,
        `Override: ${autoPickOverrideHints(input.flags).join('; ')}.`,
      ],
    },
  });
}
