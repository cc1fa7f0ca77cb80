/**
 * Starting and steering from the board (README "The saga board"): the new-saga form's options, a start
 * through the same checks and the same workflow start as `saga start`, and a cancel as `saga cancel`. The
 * gate in routes.ts has checked the origin, the token and the JSON body type before any of these runs; a
 * start names only a repository the board knows, so a page cannot point a saga at an arbitrary path.
 */
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import { loadSagaConfig } from '../../activities/config-loader';
import { knownAgentNames } from '../../domain/config/config';
import { SagaRepo } from '../../domain/contract/search-attributes';
import { sagaWorkflowId } from '../../domain/contract/naming';
import { FLAG_VOCABULARY, flagName } from '../../domain/request/flags';
import { defaultSagaHome } from '../../worker/host-settings';
import { prepareSaga, startSaga } from '../commands/start';
import { connectionSettings } from '../connection';
import { EnvironmentError, UserError } from '../errors';
import { cancelSaga } from '../saga-client';

/** What the steering routes need of the board (a slice of BoardContext). */
export interface SteerContext {
  client: Client;
  /** `saga board --repo PATH`: repositories the form offers besides those of the listed sagas. */
  repos?: string[];
  /** Recorded as who confirmed the name: `board:<user>`. */
  user: string;
  ui: { uiBaseUrl: string | null };
  watcher: { refresh(): void };
}

const MAX_BODY_BYTES = 64 * 1024;
/** The form's box for `--allow-dirty`: the page shows these words (start-options), the error names them. */
const ALLOW_DIRTY_LABEL = 'Start with uncommitted changes';
/** Enough of the server's sagas to find their repositories without reading a long history list. */
const MAX_LISTED = 1_000;

export const StartBody = z
  .object({
    repo: z.string().min(1).max(4_096),
    goal: z.string().max(20_000),
    /** Leading flags as `saga start` takes them (`--autonomous --parallel=3`); the form builds it. */
    flags: z.string().max(1_000).default(''),
    agent: z.string().min(1).max(100).optional(),
    /** The saga budget in USD (over the config's `budget.saga_usd`). */
    budgetUsd: z.number().positive().max(1_000_000).optional(),
    /** Start on a repository with uncommitted changes (`--allow-dirty`): task branches will not hold them. */
    allowDirty: z.boolean().optional(),
    name: z.string().min(1).max(100).optional(),
    /** False: check everything and propose the name, start nothing; true: start (the user confirmed it). */
    confirm: z.boolean(),
  })
  .strict();
export type StartBody = z.infer<typeof StartBody>;

/** The repositories the form may start on: each `--repo`, then those of the sagas the server lists. */
export async function knownRepos(ctx: SteerContext): Promise<string[]> {
  const repos = new Set((ctx.repos ?? []).map((r) => path.resolve(r)));
  let listed = 0;
  for await (const wf of ctx.client.workflow.list({ query: `WorkflowType = 'sagaWorkflow'` })) {
    const repo = wf.typedSearchAttributes.get(SagaRepo);
    if (repo) repos.add(repo);
    if (++listed >= MAX_LISTED) break;
  }
  return [...repos];
}

/** One repository's choices for the form: its agent profiles and configured budget, or why it cannot start. */
async function repoOptions(repo: string) {
  try {
    const { config } = await loadSagaConfig({ repo, sagaHome: defaultSagaHome() });
    return {
      path: repo,
      agents: knownAgentNames(config),
      defaultAgent: config.default_agent,
      budgetUsd: config.budget.saga_usd ?? null,
    };
  } catch (error) {
    return { path: repo, agents: [], defaultAgent: null, budgetUsd: null, error: (error as Error).message };
  }
}

/** The flag vocabulary, from the one place the parser reads it (domain/request/flags.ts). */
export const flagChoices = () => ({
  flags: FLAG_VOCABULARY.keys.map((key) => ({ key, flag: flagName(key) })),
  valueFlag: flagName(FLAG_VOCABULARY.valueFlagKey),
  defaultLanes: FLAG_VOCABULARY.defaultLanes,
  maxLanes: FLAG_VOCABULARY.maxLanes,
});

/**
 * The typed request as `saga start`'s arguments text, after what the form's fields must hold: a goal, flags
 * that are only flags (a word without `--` would start the goal), a goal that does not read as a flag.
 */
export function argumentsOf(body: Pick<StartBody, 'goal' | 'flags'>): string {
  const goal = body.goal.trim();
  if (!goal) throw new UserError('goal: write what the saga should do.');
  if (goal.startsWith('--')) throw new UserError("goal: starts with '--', which would read as a flag.");
  const words = body.flags.split(/\s+/).filter(Boolean);
  const stray = words.find((w) => !w.startsWith('--'));
  if (stray !== undefined)
    throw new UserError(`flags: '${stray}' is not a flag (flags start with --; the goal has its own field).`);
  return [...words, goal].join(' ');
}

/** Checks (and with `confirm`, starts) a saga as `saga start` would; the name confirmed by the board's user. */
export async function startFromBoard(ctx: SteerContext, body: StartBody) {
  const repo = path.resolve(body.repo);
  if (body.repo !== repo || !(await knownRepos(ctx)).includes(repo))
    throw new UserError(
      `repo: '${body.repo}' is not one of the board's repositories (those of the sagas it lists and each ` +
        '`saga board --repo PATH`).',
    );
  if (body.confirm && !body.name)
    throw new UserError('name: confirm the name the check proposed (or give one) before starting.');
  const warnings: string[] = [];
  // Routes to the server are refused in the config (domain/config/trust.ts), as `saga start` sets it.
  process.env.TEMPORAL_ADDRESS ||= connectionSettings().address;
  const input = await prepareSaga({
    repo,
    argumentsText: argumentsOf(body),
    ...(body.agent ? { agent: body.agent } : {}),
    ...(body.name ? { name: body.name } : {}),
    allowDirty: body.allowDirty === true,
    allowDirtyHint: `tick '${ALLOW_DIRTY_LABEL}'`,
    warn: (line) => warnings.push(line),
  }).catch((error: Error) => {
    // An agent CLI or sandbox that cannot run is the user's to fix too: shown on the form, not hidden as a 500.
    throw error instanceof EnvironmentError ? new UserError(error.message) : error;
  });
  if (!body.confirm) return { name: input.name, warnings, started: false };
  input.uiBaseUrl = ctx.ui.uiBaseUrl;
  input.confirmedBy = `board:${ctx.user}`;
  if (body.budgetUsd !== undefined) input.budgetUsd = body.budgetUsd;
  await startSaga(ctx.client, input);
  ctx.watcher.refresh();
  return { name: input.name, warnings, started: true, workflowId: sagaWorkflowId(input.name) };
}

/** Cancels a running saga, as `saga cancel`: agents stopped, work committed, worktrees removed. */
export async function cancelFromBoard(ctx: SteerContext, name: string) {
  await cancelSaga(ctx.client, name);
  ctx.watcher.refresh();
  return { cancelled: name };
}

const limited = () =>
  bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json({ error: `Body over ${MAX_BODY_BYTES} bytes.` }, 413),
  });

/** A JSON body checked by `schema`; a bad one is a UserError naming the first wrong field. */
async function bodyOf<T>(c: Context, schema: z.ZodType<T, z.ZodTypeDef, unknown>): Promise<T> {
  const parsed = schema.safeParse(await c.req.json().catch(() => undefined));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new UserError(`Body: ${issue.path.join('.') || 'the JSON'}: ${issue.message}.`);
}

/** Mounts the routes; `sagaName` checks a name from the path as the other routes do. */
export function steerRoutes(app: Hono, ctx: SteerContext, sagaName: (c: Context) => string): void {
  app.get('/api/start-options', async (c) =>
    c.json({
      repos: await Promise.all((await knownRepos(ctx)).map(repoOptions)),
      ...flagChoices(),
      allowDirtyLabel: ALLOW_DIRTY_LABEL,
    }),
  );
  app.post('/api/sagas', limited(), async (c) =>
    c.json(await startFromBoard(ctx, await bodyOf(c, StartBody))),
  );
  app.post('/api/sagas/:name/cancel', limited(), async (c) => {
    const name = sagaName(c);
    await bodyOf(c, z.object({}).strict());
    return c.json(await cancelFromBoard(ctx, name));
  });
}
