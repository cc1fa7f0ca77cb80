/**
 * `saga.config.yaml` (the agent profiles contract): agent profiles, worktree preparation, attempts, timeouts and budget.
 * Pure: the workflow resolves profiles from a config that an activity loaded.
 */
import { z } from 'zod';
import { ENV_NAME, envEntryProblems, isWorkerSecret } from './agent-env';
import { NetworkEntrySchema, SandboxModeSchema } from './sandbox';
import { AGENT_OUTPUT_FORMATS, AGENT_PRESETS } from './agent-presets';
import { ModelPriceSchema } from './model-prices';
import { DurationSchema, parseDuration, parseSize, SizeSchema } from './units';
import { checkDeliveryKeys, checkTokensKeptOut, DELIVERY_KEYS } from './delivery-keys';
import { INTAKE_KEYS } from './intake-keys';

/** `budget.on_exhausted`: at the saga budget, running agents finish their current run or are stopped. */
export const BUDGET_ON_EXHAUSTED = ['finish', 'stop'] as const;
export type BudgetOnExhausted = (typeof BUDGET_ON_EXHAUSTED)[number];

/** Placeholders an agent command may use; `{saga_root}` and `{node}` are filled in per machine. */
export const COMMAND_PLACEHOLDERS = [
  'prompt',
  'prompt_file',
  'workdir',
  'task_id',
  'run_dir',
  'saga_root',
  'node',
] as const;
export type CommandPlaceholder = (typeof COMMAND_PLACEHOLDERS)[number];
const PLACEHOLDER_PATTERN = /\{([a-z_]+)\}/g;

const CommandSchema = z
  .array(z.string().min(1, 'must not be empty'))
  .min(1, 'needs at least the program to run')
  .superRefine((argv, ctx) => {
    argv.forEach((arg, index) => {
      for (const [, name] of arg.matchAll(PLACEHOLDER_PATTERN)) {
        if (!(COMMAND_PLACEHOLDERS as readonly string[]).includes(name)) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: [index],
            message: `unknown placeholder {${name}}; known: ${COMMAND_PLACEHOLDERS.map((p) => `{${p}}`).join(' ')}`,
          });
        }
      }
    });
  });

/**
 * How the agent gets its prompt: `stdin` pipes the prompt file into the process (no argv limit);
 * `argument` leaves it to the command's `{prompt}` / `{prompt_file}` placeholders.
 */
export const PROMPT_INPUTS = ['argument', 'stdin'] as const;

const ProfileEnvSchema = z.record(z.string()).superRefine((env, ctx) => {
  for (const [name, value] of Object.entries(env)) {
    for (const message of envEntryProblems(name, value)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: [name], message });
    }
  }
});

/** Names of worker environment variables to pass on; never the worker's own secrets. */
const PassEnvSchema = z.array(
  z
    .string()
    .regex(ENV_NAME, 'must be an environment variable name')
    .refine((name) => !isWorkerSecret(name), {
      message: "is one of the worker's own secrets and is never passed on",
    }),
);

/** One entry under `agents:`. Fields left out come from the built-in preset of the same name, then defaults. */
export const AgentProfileSchema = z
  .object({
    command: CommandSchema.optional(),
    prompt_input: z.enum(PROMPT_INPUTS).optional(),
    /** Which CLI's machine-readable output the command prints (usage, session, failures); `text` = none. */
    output: z.enum(AGENT_OUTPUT_FORMATS).optional(),
    /** The model the command runs, for cost estimates when the CLI does not name it. */
    model: z.string().min(1).optional(),
    timeout: DurationSchema.optional(),
    idle_timeout: DurationSchema.optional(),
    subagent_dispatch: z.boolean().optional(),
    /** Values may hold `${VAR}` references, resolved from the worker's environment when the agent runs. */
    env: ProfileEnvSchema.optional(),
    /** Worker environment variables the agent also gets (it gets no others but a fixed allow-list). */
    pass_env: PassEnvSchema.optional(),
    /** `false`: a retry or a crashed run starts a fresh session instead of resuming the CLI's last one. */
    resume: z.boolean().optional(),
    /** `auto` confines the agent (default: the top-level `sandbox`); `none` runs it unconfined. */
    sandbox: SandboxModeSchema.optional(),
    /** host:port pairs the confined agent may reach besides its preset's model API (e.g. a local model). */
    network: z.array(NetworkEntrySchema).optional(),
  })
  .strict();
export type AgentProfile = z.infer<typeof AgentProfileSchema>;

const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** A relative path that stays inside the worktree. */
const InsidePathSchema = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split(/[\\/]/).includes('..'), {
    message: 'must be a relative path inside the repository (no leading / and no ..)',
  });

export const BUILTIN_AGENTS: Readonly<Record<string, AgentProfile>> = Object.fromEntries(
  Object.entries(AGENT_PRESETS).map(([name, preset]) => [name, preset.profile]),
);

/** What one task handoff may commit, and whether the user's commit hooks run on it. */
export const HandoffConfigSchema = z
  .object({
    max_files: z.number().int().min(1).default(2000),
    max_file_bytes: SizeSchema.default('5MB'),
    /**
     * The repository's own commit hooks run on handoff commits only when asked, and then confined like an
     * agent: an agent could have written them. Off by default.
     */
    run_hooks: z.boolean().default(false),
    /** Before `run_hooks`: hooks are skipped unless `run_hooks` is set, so this is accepted and ignored. */
    skip_hooks: z.boolean().optional(),
  })
  .strict();
export type HandoffConfig = z.infer<typeof HandoffConfigSchema>;

/** The handoff settings as they travel in activity inputs. */
export const handoffSettings = (config: Pick<SagaConfig, 'handoff'>) => ({
  maxFiles: config.handoff.max_files,
  maxFileBytes: parseSize(config.handoff.max_file_bytes),
  skipHooks: !config.handoff.run_hooks,
});

export const DEFAULT_AGENT_TIMEOUT = '45m';
export const DEFAULT_IDLE_TIMEOUT = '10m';
export const DEFAULT_HEARTBEAT_TIMEOUT = '30s';

export const SagaConfigSchema = z
  .object({
    default_agent: z.string().regex(AGENT_NAME, 'must be an agent profile name').default('claude'),
    agents: z
      .record(z.string().regex(AGENT_NAME, 'agent names use letters, digits, - and _'), AgentProfileSchema)
      .default({}),
    worktree: z
      .object({
        /** Where worktrees are created; default: beside the repo. */
        root: z.string().min(1).optional(),
        /** Git-ignored files copied into each worktree (e.g. `.env`). */
        copy: z.array(InsidePathSchema).default([]),
        /** argv lists run in the worktree before the agent, e.g. `[["npm", "ci"]]`. */
        setup: z.array(z.array(z.string().min(1)).min(1, 'needs at least the program to run')).default([]),
        port_range_size: z.number().int().min(1).max(1000).default(10),
      })
      .strict()
      .default({}),
    handoff: HandoffConfigSchema.default({}),
    attempts: z.number().int().min(1).max(20).default(3),
    /** Worker environment variables that checks and worktree `setup` commands also get (e.g. DATABASE_URL). */
    pass_env: PassEnvSchema.default([]),
    check_timeout: DurationSchema.default('10m'),
    /** How soon a dead worker's agent or check run is noticed and retried (default 30s). */
    heartbeat_timeout: DurationSchema.optional(),
    budget: z
      .object({
        task_usd: z.number().positive().optional(),
        saga_usd: z.number().positive().optional(),
        /** At the saga budget running agents `finish` their current run (default) or are `stop`ped. */
        on_exhausted: z.enum(BUDGET_ON_EXHAUSTED).default('finish'),
      })
      .strict()
      .default({}),
    /** $ per million tokens by model, for CLIs that report tokens but no cost (costs are then estimates). */
    prices: z.record(z.string().min(1), ModelPriceSchema).default({}),
    /** `auto`: every agent, check and set-up command runs confined; `none`: unconfined. */
    sandbox: SandboxModeSchema.default('auto'),
    /** host:port pairs checks and worktree `setup` commands may reach (e.g. registry.npmjs.org:443). */
    network: z.array(NetworkEntrySchema).default([]),
    /** `delivery`, `pr`, `forge`, `ci_fix_attempts`, `auto_merge`, `review_bots` (delivery-keys.ts). */
    ...DELIVERY_KEYS,
    /** `intake:`: trackers a saga is started from, and where its questions go (intake-keys.ts). */
    ...INTAKE_KEYS,
  })
  .strict()
  .superRefine((config, ctx) => {
    checkDeliveryKeys(config, ctx);
    checkTokensKeptOut(config, ctx);
    for (const [name, profile] of Object.entries(config.agents)) {
      if (!profile.command && !BUILTIN_AGENTS[name]) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['agents', name, 'command'],
          message: `required: '${name}' is not a built-in preset (${Object.keys(BUILTIN_AGENTS).join(', ')})`,
        });
      }
    }
    const known = knownAgentNames(config);
    if (!known.includes(config.default_agent)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['default_agent'],
        message: `unknown agent profile '${config.default_agent}'; known: ${known.join(', ')}`,
      });
    }
  });
export type SagaConfig = z.infer<typeof SagaConfigSchema>;

export const DEFAULT_SAGA_CONFIG: SagaConfig = SagaConfigSchema.parse({});

export function knownAgentNames(config: Pick<SagaConfig, 'agents'>): string[] {
  return [...new Set([...Object.keys(BUILTIN_AGENTS), ...Object.keys(config.agents)])].sort();
}

export const checkTimeoutMs = (config: SagaConfig): number => parseDuration(config.check_timeout);
export const heartbeatTimeoutMs = (config: SagaConfig): number =>
  parseDuration(config.heartbeat_timeout ?? DEFAULT_HEARTBEAT_TIMEOUT);

/**
 * Fills `{placeholder}`s inside each argv element. Never joins into a shell string; substituted values are
 * not expanded again. A placeholder without a value is an error naming it, unless `leaveMissing` keeps it
 * for a later step (the loader fills only the per-machine ones).
 */
export function expandCommand(
  command: readonly string[],
  values: Partial<Record<CommandPlaceholder, string>>,
  opts: { leaveMissing?: boolean } = {},
): string[] {
  return command.map((arg) =>
    arg.replace(PLACEHOLDER_PATTERN, (whole, name: string) => {
      const value = values[name as CommandPlaceholder];
      if (value === undefined) {
        if (opts.leaveMissing) return whole;
        throw new Error(`Agent command argument '${arg}' uses ${whole}, but no value was given for it.`);
      }
      return value;
    }),
  );
}
