/**
 * The write-back to the issue (docs/PROCEDURE.md §14): one workpad comment kept up to date, and a label per
 * phase. The saga and its fleet send `WorkpadUpdate`s at phase boundaries only (plan approved, each
 * milestone integrated, a PR opened, acceptance, the end); the issue sync merges them and writes.
 */
import { z } from 'zod';

/** The phases a tracker shows, each a label `saga:<phase>` (Linear: also a workflow state, where it has it). */
export const TRACKER_PHASES = ['planning', 'implementation', 'review', 'done', 'cancelled'] as const;
export type TrackerPhase = (typeof TRACKER_PHASES)[number];
export const phaseLabel = (phase: TrackerPhase): string => `saga:${phase}`;

/** Hidden in the comment's body: how the saga finds its own workpad again (one per issue, created once). */
export const WORKPAD_MARKER = '<!-- saga:workpad -->';

export const WorkpadTaskSchema = z.object({
  key: z.string(),
  title: z.string(),
  status: z.string(),
  agent: z.string().nullable(),
});

export const WorkpadMilestoneSchema = z.object({
  id: z.number().int(),
  title: z.string(),
  status: z.string(),
  tasks: z.array(WorkpadTaskSchema),
});
export type WorkpadMilestone = z.infer<typeof WorkpadMilestoneSchema>;

/** What the workpad shows; every part optional in an update (a later update's part replaces the earlier). */
export const WorkpadSchema = z.object({
  sagaName: z.string(),
  phase: z.enum(TRACKER_PHASES),
  /** The planner's restatement of the request. */
  problem: z.string().nullable(),
  exitCriteria: z.array(z.object({ id: z.string(), text: z.string(), result: z.string().nullable() })),
  milestones: z.array(WorkpadMilestoneSchema),
  pullRequests: z.array(
    z.object({
      number: z.number().int(),
      url: z.string(),
      milestone: z.number().int().nullable(),
      state: z.string(),
    }),
  ),
  costUsd: z.number(),
  /** The Web UI link of the saga, when the server has one. */
  uiUrl: z.string().nullable(),
});
export type Workpad = z.infer<typeof WorkpadSchema>;

export const WorkpadUpdateSchema = WorkpadSchema.partial();
export type WorkpadUpdate = z.infer<typeof WorkpadUpdateSchema>;
