/**
 * The delivery keys of saga.config.yaml (`delivery:`, `pr:`, `forge:`, `ci_fix_attempts:`, `auto_merge:`,
 * `review_bots:`), defined once: SagaConfigSchema spreads them into the file's schema and
 * domain/delivery/delivery-config.ts turns them into the settings a saga runs with. They live on the config
 * floor because the config schema needs them and config sits below delivery.
 */
import { z } from 'zod';

/** `local` keeps the integration branch and `saga accept`; `pr` delivers as pull requests on the forge. */
export const DELIVERY_MODES = ['local', 'pr'] as const;
/** One PR per integrated milestone, each on the previous one's branch; or one PR of the integration branch. */
export const PR_LAYOUTS = ['stacked', 'single'] as const;
export type PrLayout = (typeof PR_LAYOUTS)[number];
export const FORGE_KINDS = ['github', 'gitea'] as const;
/** Review comments by bots: only `list`ed in status, or `act`ed on like a person's. */
export const REVIEW_BOTS = ['list', 'act'] as const;
export type ReviewBots = (typeof REVIEW_BOTS)[number];

export const DEFAULT_GITHUB_API = 'https://api.github.com';

/**
 * The forge's API root. Only http(s), and no user or password in it: the token travels in a header read
 * from `token_env`, never in a URL someone could log.
 */
export const ForgeUrlSchema = z
  .string()
  .url('must be a URL, e.g. https://gitea.example.com')
  .refine((url) => /^https?:$/.test(new URL(url).protocol), { message: 'must be an http:// or https:// URL' })
  .refine(
    (url) => {
      const parsed = new URL(url);
      return parsed.username === '' && parsed.password === '';
    },
    { message: 'must not hold a user or password (the token is read from token_env)' },
  );

/** The NAME of the variable holding a token; a token itself is refused by this pattern. */
export const TokenEnvSchema = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name (A-Z, 0-9, _)');

export const ForgeConfigSchema = z
  .object({
    kind: z.enum(FORGE_KINDS),
    /** Default for GitHub: https://api.github.com; a Gitea/Forgejo or GitHub Enterprise needs its own. */
    url: ForgeUrlSchema.optional(),
    repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'must be OWNER/NAME'),
    remote: z
      .string()
      .regex(/^[\w.][\w.-]*$/, 'must be a git remote name, e.g. origin')
      .default('origin'),
    /** The NAME of the variable holding the token; a token itself here is refused by this pattern. */
    token_env: TokenEnvSchema,
  })
  .strict();
export type ForgeConfig = z.infer<typeof ForgeConfigSchema>;

/** The delivery keys with their defaults, spread into SagaConfigSchema and DeliveryConfigSchema. */
export const DELIVERY_KEYS = {
  delivery: z.enum(DELIVERY_MODES).default('local'),
  pr: z.enum(PR_LAYOUTS).default('stacked'),
  forge: ForgeConfigSchema.optional(),
  /** Fix tasks per pull request for failing CI before the user is asked. */
  ci_fix_attempts: z.number().int().min(0).max(20).default(2),
  /** Merge green, approved PRs without asking; off: only when the user answers `merge`. */
  auto_merge: z.boolean().default(false),
  review_bots: z.enum(REVIEW_BOTS).default('list'),
};

export interface DeliveryKeys {
  delivery: (typeof DELIVERY_MODES)[number];
  forge?: ForgeConfig | undefined;
}

/** The rules across keys; each issue names the key to fix. */
export function checkDeliveryKeys(config: DeliveryKeys, ctx: z.RefinementCtx): void {
  if (config.delivery === 'pr' && !config.forge)
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ['forge'],
      message: '`delivery: pr` needs a `forge:` (kind, repo, token_env; url for Gitea)',
    });
  if (config.forge && config.forge.kind === 'gitea' && !config.forge.url)
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ['forge', 'url'],
      message: 'a Gitea forge needs its url (its web root, e.g. https://git.example.com)',
    });
}

/** A token's variable and the key that names it (`forge.token_env`, `intake.gitea.token_env`). */
export interface TokenVariable {
  key: string;
  name: string;
  /** What the token is, in the refusal: `the forge token`. */
  what: string;
}

/**
 * No token of saga's own enters a sandbox: a `pass_env` (checks and set-up, or an agent profile's) naming
 * `forge.token_env` or a tracker's `intake.*.token_env` would hand the token to code an agent wrote.
 */
export function checkTokensKeptOut(
  config: {
    forge?: ForgeConfig | undefined;
    intake?: Partial<Record<'github' | 'gitea' | 'linear', { token_env: string } | undefined>>;
    pass_env: readonly string[];
    agents: Readonly<Record<string, { pass_env?: readonly string[] | undefined }>>;
  },
  ctx: z.RefinementCtx,
): void {
  const tokens: TokenVariable[] = [
    ...(config.forge
      ? [{ key: 'forge.token_env', name: config.forge.token_env, what: 'the forge token' }]
      : []),
    ...(['github', 'gitea', 'linear'] as const).flatMap((kind) => {
      const name = config.intake?.[kind]?.token_env;
      return name ? [{ key: `intake.${kind}.token_env`, name, what: `the ${kind} tracker token` }] : [];
    }),
  ];
  for (const problem of tokenPassProblems(config, tokens))
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: problem.path, message: problem.message });
}

/** Each `pass_env` entry (top level or a profile's) naming one of `tokens`: where it is and why it is refused. */
export function tokenPassProblems(
  config: {
    pass_env: readonly string[];
    agents: Readonly<Record<string, { pass_env?: readonly string[] | undefined }>>;
  },
  tokens: readonly TokenVariable[],
): { path: (string | number)[]; message: string }[] {
  const lists: [(string | number)[], readonly string[]][] = [
    [['pass_env'], config.pass_env],
    ...Object.entries(config.agents).map(([name, profile]): [(string | number)[], readonly string[]] => [
      ['agents', name, 'pass_env'],
      profile.pass_env ?? [],
    ]),
  ];
  const problems: { path: (string | number)[]; message: string }[] = [];
  for (const [at, list] of lists) {
    list.forEach((name, index) => {
      const token = tokens.find((t) => t.name === name);
      if (token)
        problems.push({
          path: [...at, index],
          message: `is ${token.key}: ${token.what} is never passed to agents, checks or set-up commands`,
        });
    });
  }
  return problems;
}
