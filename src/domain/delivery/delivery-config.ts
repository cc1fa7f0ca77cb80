/**
 * The delivery settings of saga.config.yaml as one schema (the keys themselves are defined once in
 * domain/config/delivery-keys.ts, which SagaConfigSchema also spreads), and what a saga runs with:
 * `delivery: local` (the default) keeps the local ending (`saga accept`); `delivery: pr`, or
 * `saga start --deliver`, pushes and opens pull requests on the `forge:`.
 */
import { z } from 'zod';
import {
  checkDeliveryKeys,
  DEFAULT_GITHUB_API,
  DELIVERY_KEYS,
  PR_LAYOUTS,
  REVIEW_BOTS,
  type ForgeConfig,
} from '../config/delivery-keys';
import { ForgeTargetSchema, MERGE_METHODS, type ForgeTarget } from './forge-shapes';

export { ForgeConfigSchema } from '../config/delivery-keys';

export const DeliveryConfigSchema = z.object(DELIVERY_KEYS).superRefine(checkDeliveryKeys);
export type DeliveryConfig = z.infer<typeof DeliveryConfigSchema>;

/** The forge the settings name, as the adapters take it. */
export function forgeTarget(forge: ForgeConfig): ForgeTarget {
  const [owner, repo] = forge.repo.split('/') as [string, string];
  return ForgeTargetSchema.parse({
    kind: forge.kind,
    url: forge.url ?? DEFAULT_GITHUB_API,
    owner,
    repo,
    tokenEnv: forge.token_env,
  });
}

/**
 * The delivery settings a saga runs with (fixed in its history at start, like the other run settings):
 * absent for `delivery: local`.
 */
export const DeliverySettingsSchema = z.object({
  pr: z.enum(PR_LAYOUTS),
  target: ForgeTargetSchema,
  /** The git remote that is the forge's copy of the repository. */
  remote: z.string().min(1),
  ciFixAttempts: z.number().int().min(0),
  autoMerge: z.boolean(),
  reviewBots: z.enum(REVIEW_BOTS),
  mergeMethod: z.enum(MERGE_METHODS).default('merge'),
});
export type DeliverySettings = z.infer<typeof DeliverySettingsSchema>;

/** What `saga start --deliver` asks when the config names no forge (checked before anything starts). */
export const DELIVER_NEEDS_FORGE =
  '--deliver needs a `forge:` in your saga.config.yaml (kind, repo, token_env; url for Gitea or GitHub Enterprise)';

/**
 * The run settings for `config`: undefined with `delivery: local`, unless `deliver` (`saga start --deliver`)
 * asks for pull requests for this saga; then the config must name a forge.
 */
export function deliverySettings(
  config: DeliveryConfig,
  opts: { deliver?: boolean } = {},
): DeliverySettings | undefined {
  if (config.delivery !== 'pr' && !opts.deliver) return undefined;
  if (!config.forge) {
    // The schema refuses `delivery: pr` without a forge, so only --deliver gets here.
    throw new Error(DELIVER_NEEDS_FORGE);
  }
  return {
    pr: config.pr,
    target: forgeTarget(config.forge),
    remote: config.forge.remote,
    ciFixAttempts: config.ci_fix_attempts,
    autoMerge: config.auto_merge,
    reviewBots: config.review_bots,
    mergeMethod: 'merge',
  };
}
