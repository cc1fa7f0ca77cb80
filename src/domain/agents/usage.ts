/** Token and cost arithmetic, in one place for tasks, milestones and the saga. Pure. */
import type { ModelPrice } from '../config/model-prices';
import type { Usage } from '../contract/state';

export const noUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

/** The sum; an estimated part makes the sum an estimate. */
export function addUsage(a: Usage, b: Usage | null | undefined): Usage {
  if (!b) return a;
  const sum: Usage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    costUsd: a.costUsd + b.costUsd,
  };
  const cached = (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  if (cached > 0) sum.cachedInputTokens = cached;
  if (a.costEstimated || b.costEstimated) sum.costEstimated = true;
  return sum;
}

/** What `after` adds to `before` (a task's usage reported again with more runs in it). */
export function usageDelta(after: Usage | undefined, before: Usage | undefined): Usage {
  const a = after ?? noUsage();
  const b = before ?? noUsage();
  return {
    inputTokens: a.inputTokens - b.inputTokens,
    outputTokens: a.outputTokens - b.outputTokens,
    costUsd: a.costUsd - b.costUsd,
    ...(a.costEstimated ? { costEstimated: true } : {}),
  };
}

/**
 * Cost of tokens at a price (USD per million). `inputTokens` includes the cached ones, which are charged at
 * the cached price when the table has one.
 */
export function priceTokens(
  tokens: { inputTokens: number; outputTokens: number; cachedInputTokens?: number },
  price: ModelPrice,
): number {
  const cached = Math.min(tokens.cachedInputTokens ?? 0, tokens.inputTokens);
  const fresh = tokens.inputTokens - cached;
  const perToken = 1 / 1_000_000;
  return (
    (fresh * price.input + cached * (price.cached ?? price.input) + tokens.outputTokens * price.output) *
    perToken
  );
}

/** Tokens priced from the table when the CLI gave no cost. */
export function estimateCost(
  usage: Usage,
  model: string | null,
  prices?: Readonly<Record<string, ModelPrice>>,
): Usage {
  const price = model ? findPrice(model, prices ?? {}) : null;
  if (!price) return usage;
  return { ...usage, costUsd: priceTokens(usage, price), costEstimated: true };
}

/** Exact name, else the longest table entry the model's name starts with (`gpt-5-2026-01` → `gpt-5`). */
function findPrice(model: string, prices: Readonly<Record<string, ModelPrice>>): ModelPrice | null {
  const name = model.replace(/^models\//, '');
  if (prices[name]) return prices[name]!;
  const prefix = Object.keys(prices)
    .filter((k) => name.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
  return prefix ? prices[prefix]! : null;
}

/** `$0.42, 12000 in / 678 out tokens`; an estimated cost reads `~$0.42 (estimate)`. */
export const formatUsage = (u: Usage): string =>
  `${u.costEstimated ? '~' : ''}$${u.costUsd.toFixed(2)}${u.costEstimated ? ' (estimate)' : ''}, ${u.inputTokens} in / ${u.outputTokens} out tokens`;
