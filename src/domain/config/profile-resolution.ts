/** Which agent profile a role runs: a configured profile or a built-in preset, resolved to what the run needs. Pure. */
import { z } from 'zod';
import { AGENT_OUTPUT_FORMATS, AGENT_PRESETS } from './agent-presets';
import {
  BUILTIN_AGENTS,
  DEFAULT_AGENT_TIMEOUT,
  DEFAULT_IDLE_TIMEOUT,
  knownAgentNames,
  PROMPT_INPUTS,
  type AgentProfile,
  type SagaConfig,
} from './config';
import { resumeCommandFor } from './preset-commands';
import { parseDuration } from './units';
import { DEFAULT_MODEL_PRICES, ModelPriceSchema } from './model-prices';
import { SandboxModeSchema } from './sandbox';

/** A profile ready to run: every field filled in, durations in milliseconds. Travels in activity inputs. */
export const ResolvedAgentProfileSchema = z.object({
  name: z.string(),
  command: z.array(z.string()).min(1),
  /** Optional with defaults so profiles recorded in older histories still parse. */
  promptInput: z.enum(PROMPT_INPUTS).default('argument'),
  output: z.enum(AGENT_OUTPUT_FORMATS).default('text'),
  model: z.string().nullable().default(null),
  prices: z.record(ModelPriceSchema).default({}),
  timeoutMs: z.number().int().positive(),
  idleTimeoutMs: z.number().int().positive(),
  subagentDispatch: z.boolean(),
  /** Literal values, `${VAR}` references, or CONFIG_SECRET_REFERENCE (src/domain/config/agent-env.ts). */
  env: z.record(z.string()).default({}),
  passEnv: z.array(z.string()).default([]),
  /** The config file the activity re-reads CONFIG_SECRET_REFERENCE values from. */
  configFile: z.string().nullable().default(null),
  /** The command that resumes a session (`{session}`); null: runs always start fresh. */
  resumeCommand: z.array(z.string()).nullable().default(null),
  /** Profiles of histories recorded before the sandbox had none: they run confined now. */
  sandbox: SandboxModeSchema.default('auto'),
  /** host:port pairs the confined agent may reach (its preset's model API and the profile's `network`). */
  network: z.array(z.string()).default([]),
  /**
   * The config files the worker resolves this profile from again before it runs it (what runs is never the
   * input's word): the user's file (null: the worker's saga home's) and the repository's, when the user
   * trusted it to widen what runs. Null in older histories: `configFile` alone.
   */
  sources: z.object({ user: z.string().nullable(), repo: z.string().nullable() }).nullable().default(null),
});
export type ResolvedAgentProfile = z.infer<typeof ResolvedAgentProfileSchema>;

/** The named profile (default: `default_agent`), the user's fields over the preset of the same name. */
export function resolveAgentProfile(config: SagaConfig, name?: string): ResolvedAgentProfile {
  const wanted = name ?? config.default_agent;
  const preset = BUILTIN_AGENTS[wanted];
  const user = config.agents[wanted];
  if (!preset && !user) {
    throw new Error(
      `Unknown agent profile '${wanted}'. Known profiles: ${knownAgentNames(config).join(', ')}.`,
    );
  }
  // How the prompt goes in and what comes out describe the preset's command: a user's own command starts
  // from the plain defaults unless it says otherwise.
  const { prompt_input: _in, output: _out, ...presetRest } = preset ?? {};
  const ownCommand = user?.command && JSON.stringify(user.command) !== JSON.stringify(preset?.command);
  const base = ownCommand ? presetRest : preset;
  const merged: AgentProfile = {
    ...base,
    ...definedOnly(user ?? {}),
    env: { ...preset?.env, ...user?.env },
  };
  if (!merged.command) throw new Error(`Agent profile '${wanted}' has no command.`);
  return {
    name: wanted,
    command: [...merged.command],
    promptInput: merged.prompt_input ?? 'argument',
    output: merged.output ?? 'text',
    model: merged.model ?? null,
    prices: { ...DEFAULT_MODEL_PRICES, ...config.prices },
    timeoutMs: parseDuration(merged.timeout ?? DEFAULT_AGENT_TIMEOUT),
    idleTimeoutMs: parseDuration(merged.idle_timeout ?? DEFAULT_IDLE_TIMEOUT),
    // The saga dispatches every run as a fresh process: only a profile that says otherwise cannot.
    subagentDispatch: merged.subagent_dispatch ?? true,
    env: merged.env ?? {},
    passEnv: [...(merged.pass_env ?? [])],
    configFile: null,
    // Only a command that prints the preset's own output names its sessions; `resume: false` opts out.
    resumeCommand:
      merged.resume === false || !preset?.output || merged.output !== preset.output
        ? null
        : resumeCommandFor(wanted, merged.command),
    sandbox: user?.sandbox ?? config.sandbox,
    network: [...new Set([...(AGENT_PRESETS[wanted]?.network ?? []), ...(user?.network ?? [])])],
    sources: null,
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
