/**
 * manifest.md (the saga directory contract; autonomous mode): YAML front matter with the flags, the execution mode and the audit
 * trail of automatic decisions, then a short body for people. Rendered after every change and parsed back
 * only to merge the next update into it (activities/artifacts). Pure.
 */
import { z } from 'zod';
import YAML from 'yaml';
import { FlagsResultSchema } from '../contract/flags-result';
import { ReviewActionSchema, ReviewCountsSchema } from '../fleet/review';
import { zodIssueLines } from '../text/zod-errors';

const FlagSourceSchema = z.enum(['flag', 'config']).nullable();
export const ManifestFlagsSchema = FlagsResultSchema.omit({ goal: true, error: true });

/** Autonomous mode: one entry per checkpoint that proceeded without the user, with the flag sources behind it. */
export const AutoPickedCheckpointSchema = z.object({
  phase: z.string(),
  checkpoint: z.string(),
  decision: z.string(),
  timestamp: z.string(),
  reason: z.string(),
  flag_sources: z.record(z.string(), FlagSourceSchema),
});

/** Autonomous mode: per-phase autonomy budget. */
export const AutonomousDecisionCountSchema = z.object({
  phase: z.string(),
  decided: z.number().int().min(0),
  asked: z.number().int().min(0),
  sources: z.record(z.string(), z.number().int().min(0)),
});

/**
 * One quality-locked review iteration of one subject (plan, task result...): the review module's
 * iteration record plus where the findings are. Extra keys are kept, never dropped from the audit trail.
 */
export const QualityLockedEntrySchema = z
  .object({
    subject: z.string(),
    iteration: z.number().int().min(1),
    counts: ReviewCountsSchema,
    result: ReviewActionSchema,
    findings: z.string().optional(),
    timestamp: z.string().optional(),
  })
  .passthrough();

export const ManifestFrontSchema = z.object({
  saga: z.string(),
  flags: ManifestFlagsSchema,
  /** Exactly the resolved mode: `subagents`, `inline` or `inline (subagents-unavailable)` (the flags contract). */
  execution_mode: z.string(),
  /** Lanes, recorded apart from the mode: `sequential` or `parallel (N lanes)` (older sagas: `sequential (parallel-requires-subagents)`). */
  parallel_mode: z.string().optional(),
  auto_picked_checkpoints: z.array(AutoPickedCheckpointSchema).default([]),
  autonomous_decisions: z.array(AutonomousDecisionCountSchema).default([]),
  quality_locked_history: z.array(QualityLockedEntrySchema).default([]),
});
export type ManifestFront = z.infer<typeof ManifestFrontSchema>;
export type ManifestFrontInput = z.input<typeof ManifestFrontSchema>;
/** The list fields of the manifest, which `updateManifest` can append to. */
export const MANIFEST_LIST_KEYS = [
  'auto_picked_checkpoints',
  'autonomous_decisions',
  'quality_locked_history',
] as const;

export const defaultManifestBody = (saga: string): string =>
  `\n# Manifest: ${saga}\n\nFlags, execution mode and the audit trail of automatic decisions (front matter ` +
  'above, machine-readable). Human-readable entries are in [decisions.md](decisions.md).\n';

/** YAML front matter between `---` lines, then the body. Throws if `front` does not fit the schema. */
export function renderManifest(front: ManifestFrontInput, body?: string): string {
  const parsed = ManifestFrontSchema.parse(front);
  const yaml = YAML.stringify(parsed, { lineWidth: 0, aliasDuplicateObjects: false });
  return `---\n${yaml}---\n${body ?? defaultManifestBody(parsed.saga)}`;
}

/** Inverse of renderManifest. Throws an Error naming what is wrong with the text. */
export function parseManifest(text: string): { front: ManifestFront; body: string } {
  // The closing `---` must be a line of its own; YAML never emits such a line inside a mapping value.
  const match = /^---\r?\n([\s\S]*?\r?\n)?---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  if (!match) throw new Error('manifest.md: expected YAML front matter between "---" lines at the top');
  let raw: unknown;
  try {
    raw = YAML.parse(match[1] ?? '');
  } catch (err) {
    throw new Error(`manifest.md: front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const parsed = ManifestFrontSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `manifest.md: invalid front matter: ${zodIssueLines(parsed.error, '(front matter)').join('; ')}`,
    );
  }
  return { front: parsed.data, body: match[2] };
}
