/**
 * The delivery settings of saga.config.yaml (`delivery:`, `pr:`, `forge:`, `ci_fix_attempts:`, `auto_merge:`,
 * `review_bots:`) as one schema, and the forge target they name. `delivery: local` (the default) keeps the
 * local ending (`saga accept`); `delivery: pr` needs a `forge:`.
 */
import { z } from 'zod';
import { ForgeTargetSchema, MERGE_METHODS, type ForgeTarget } from './forge-shapes';
import { REVIEW_BOTS } from './review-fixes';

export const ForgeConfigSchema = z
  .object({
    kind: z.enum(['github', 'gitea']),
    /** Default for GitHub: https://api.github.com; a Gitea/Forgejo or GitHub Enterprise needs its own. */
    url: z.string().url().optional(),
    repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'OWNER/NAME'),
    remote: z.string().min(1).default('origin'),
    token_env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name (A-Z, 0-9, _)'),
  })
  .strict();

export const DeliveryConfigSchema = z
  .object({
    delivery: z.enum(['local', 'pr']).default('local'),
    pr: z.enum(['stacked', 'single']).default('stacked'),
    forge: ForgeConfigSchema.optional(),
    ci_fix_attempts: z.number().int().min(0).max(20).default(2),
    auto_merge: z.boolean().default(false),
    review_bots: z.enum(REVIEW_BOTS).default('list'),
  })
  .superRefine((config, ctx) => {
    if (config.delivery === 'pr' && !config.forge)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['forge'],
        message: '`delivery: pr` needs a `forge:`',
      });
    if (config.forge && config.forge.kind === 'gitea' && !config.forge.url)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['forge', 'url'],
        message: 'a Gitea forge needs its `url`',
      });
  });
export type DeliveryConfig = z.infer<typeof DeliveryConfigSchema>;

/** The forge the settings name, as the adapters take it. */
export function forgeTarget(forge: z.infer<typeof ForgeConfigSchema>): ForgeTarget {
  const [owner, repo] = forge.repo.split('/') as [string, string];
  return ForgeTargetSchema.parse({
    kind: forge.kind,
    url: forge.url ?? 'https://api.github.com',
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
  pr: z.enum(['stacked', 'single']),
  target: ForgeTargetSchema,
  /** The git remote that is the forge's copy of the repository. */
  remote: z.string().min(1),
  ciFixAttempts: z.number().int().min(0),
  autoMerge: z.boolean(),
  reviewBots: z.enum(REVIEW_BOTS),
  mergeMethod: z.enum(MERGE_METHODS).default('merge'),
});
export type DeliverySettings = z.infer<typeof DeliverySettingsSchema>;

/** The run settings for `config`: undefined with `delivery: local`. */
export function deliverySettings(config: DeliveryConfig): DeliverySettings | undefined {
  if (config.delivery !== 'pr' || !config.forge) return undefined;
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
