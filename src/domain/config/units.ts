/** Durations ("45m", "1h30m") and sizes ("5MB") as saga.config.yaml writes them, with their zod schemas. Pure. */
import { z } from 'zod';

const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
const DURATION_PATTERN = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;

/** "45m", "90s", "2h", "1h30m", "500ms" → milliseconds. Throws on anything else. */
export function parseDuration(text: string): number {
  const compact = text.trim().replace(/\s+/g, '');
  if (!DURATION_PATTERN.test(compact)) {
    throw new Error(`Invalid duration '${text}': expected a number with a unit, like 45m, 90s, 2h or 1h30m.`);
  }
  let total = 0;
  for (const [, amount, unit] of compact.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(amount) * DURATION_UNITS_MS[unit as keyof typeof DURATION_UNITS_MS];
  }
  if (total <= 0) throw new Error(`Invalid duration '${text}': it must be longer than zero.`);
  return Math.round(total);
}

export const DurationSchema = z.string().superRefine((text, ctx) => {
  try {
    parseDuration(text);
  } catch (err) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
  }
});

const SIZE_UNITS = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 } as const;

/** "5MB", "500KB", "1.5 GB", "2048" (bytes) or a number of bytes → bytes (KB = 1024 bytes). */
export function parseSize(value: string | number): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(String(value).trim());
  const bytes = match
    ? Number(match[1]) * SIZE_UNITS[(match[2]?.toLowerCase() ?? 'b') as keyof typeof SIZE_UNITS]
    : NaN;
  if (!Number.isFinite(bytes) || bytes < 1) {
    throw new Error(`Invalid size '${value}': expected bytes or a number with KB, MB or GB, like 5MB.`);
  }
  return Math.floor(bytes);
}

export const SizeSchema = z.union([z.number(), z.string()]).superRefine((value, ctx) => {
  try {
    parseSize(value);
  } catch (err) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
  }
});
