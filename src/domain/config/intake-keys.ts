/**
 * The intake keys of saga.config.yaml (`intake:`), defined once: SagaConfigSchema spreads them into the
 * file's schema and the tracker domain turns them into the settings a saga from an issue runs
 * with (docs/PROCEDURE.md §14). They live on the config floor because the config schema needs them.
 *
 *   intake:
 *     questions: issue          # planning questions go to the issue too (default: cli)
 *     gitea:  { url: https://git.example.com, token_env: GITEA_TOKEN }
 *     github: { url: https://api.github.com, token_env: GITHUB_TOKEN }   # url optional
 *     linear: { token_env: LINEAR_API_KEY }                              # url optional
 *     max_sagas: 3              # saga watch: sagas running at once, at most
 *     poll_seconds: 60          # saga watch: how often the tracker is asked
 *
 * A GitHub or Gitea tracker left out defaults to `forge:` when the forge is of that kind.
 */
import { z } from 'zod';
import { ForgeUrlSchema, TokenEnvSchema } from './delivery-keys';

export const TRACKER_KINDS = ['github', 'gitea', 'linear'] as const;
export type TrackerKind = (typeof TRACKER_KINDS)[number];
/** Where planning questions are asked: the CLI and chat only, or also on the issue. */
export const INTAKE_QUESTIONS = ['cli', 'issue'] as const;

export const DEFAULT_LINEAR_API = 'https://api.linear.app/graphql';

export const TrackerConfigSchema = z
  .object({
    // The same rules as the forge's url and token_env: http(s), no credentials, a variable's name.
    url: ForgeUrlSchema.optional(),
    /** The NAME of the variable holding the token; a token itself here is refused by this pattern. */
    token_env: TokenEnvSchema,
  })
  .strict();
export type TrackerConfig = z.infer<typeof TrackerConfigSchema>;

export const IntakeConfigSchema = z
  .object({
    questions: z.enum(INTAKE_QUESTIONS).default('cli'),
    github: TrackerConfigSchema.optional(),
    gitea: TrackerConfigSchema.optional(),
    linear: TrackerConfigSchema.optional(),
    max_sagas: z.number().int().min(1).max(50).default(3),
    poll_seconds: z.number().int().min(5).max(86_400).default(60),
  })
  .strict();
export type IntakeConfig = z.infer<typeof IntakeConfigSchema>;

/** The intake key with its default, spread into SagaConfigSchema. */
export const INTAKE_KEYS = {
  intake: IntakeConfigSchema.default({}),
};
