import { z } from 'zod';

/** One command found in the repo's own files and confirmed by running it. */
export const DiscoveredCommandSchema = z.object({
  purpose: z.enum(['test', 'build', 'lint', 'typecheck', 'launch']),
  /** argv, never a shell string. */
  argv: z.array(z.string()).min(1),
  source: z.string(), // e.g. "package.json scripts.test"
  confirmed: z.enum(['passed', 'failed', 'timed-out', 'not-run']),
  exitCode: z.number().int().nullable(),
  durationMs: z.number().int().nullable(),
  outputPath: z.string().nullable(),
});
export type DiscoveredCommand = z.infer<typeof DiscoveredCommandSchema>;

/** What discovery learned about the target repo (SAGA.md "Environment" section). */
export const EnvironmentSchema = z.object({
  programType: z.enum(['web app', 'native GUI', 'TUI', 'CLI/library', 'backend service', 'unknown']),
  programTypeReason: z.string(),
  languages: z.array(z.string()),
  commands: z.array(DiscoveredCommandSchema),
  launch: z.string().nullable(),
  computerUse: z.enum(['local', 'remote only', 'not available']),
  notes: z.array(z.string()),
});
export type Environment = z.infer<typeof EnvironmentSchema>;
