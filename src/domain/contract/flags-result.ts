/**
 * The flags contract's JSON (README, Real use; docs/ARCHITECTURE.md, Contracts): what the flags parser
 * (src/domain/request/flags.ts) returns and the saga's status shows. Pure: imported by workflow code.
 */
import { z } from 'zod';

/** The parser's JSON contract (the flags contract): twelve keys, always present, in this order. */
export const FlagsResultSchema = z.object({
  quality_locked: z.boolean(),
  autonomous: z.boolean(),
  subagents: z.boolean(),
  parallel: z.boolean(),
  goal: z.string(),
  error: z.string().nullable(),
  quality_locked_source: z.enum(['flag', 'config']).nullable(),
  autonomous_source: z.enum(['flag', 'config']).nullable(),
  subagents_source: z.enum(['flag', 'config']).nullable(),
  parallel_source: z.enum(['flag', 'config']).nullable(),
  parallel_lanes: z.number().int().min(0).max(4),
  parallel_note: z.string().nullable(),
});
export type FlagsResult = z.infer<typeof FlagsResultSchema>;
