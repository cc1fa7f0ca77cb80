/** Model prices, for the CLIs that report tokens but no cost. Pure data. */
import { z } from 'zod';

/** $ per million tokens. */
export const ModelPriceSchema = z
  .object({
    input: z.number().min(0),
    output: z.number().min(0),
    cached: z.number().min(0).optional(),
  })
  .strict();
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/**
 * Public list prices (USD per million tokens) of a few models whose CLIs report tokens but no cost. Costs
 * computed from them are marked as estimates; `prices:` in saga.config.yaml overrides or adds entries.
 */
export const DEFAULT_MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-5': { input: 1.25, output: 10, cached: 0.125 },
  'gpt-5-codex': { input: 1.25, output: 10, cached: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cached: 0.025 },
  'gemini-2.5-pro': { input: 1.25, output: 10, cached: 0.31 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cached: 0.075 },
};
