/** Small helpers every saga workflow uses. */
import { ApplicationFailure, getExternalWorkflowHandle, log } from '@temporalio/workflow';
import type { ResolvedAgentProfile } from '../domain/config/profile-resolution';
import { worktreePath } from '../domain/contract/naming';
import type { SagaContext } from '../domain/saga/saga-input';
import type { ProgressEvent } from '../domain/contract/state';
import { progressBatchSignal, progressSignal } from '../domain/saga/messages';

/** Sends a state change to the saga workflow; a saga that is gone must not fail the sender. */
export async function report(ctx: SagaContext, event: ProgressEvent): Promise<void> {
  try {
    await getExternalWorkflowHandle(ctx.sagaWorkflowId).signal(progressSignal, event);
  } catch (error) {
    log.warn('Could not report progress to the saga workflow', { error: String(error) });
  }
}

/** Several state changes in one signal, in order (one workflow task in the saga). */
export async function reportAll(ctx: SagaContext, events: ProgressEvent[]): Promise<void> {
  if (!events.length) return;
  try {
    await getExternalWorkflowHandle(ctx.sagaWorkflowId).signal(progressBatchSignal, events);
  } catch (error) {
    log.warn('Could not report progress to the saga workflow', { error: String(error) });
  }
}

export const sagaLog = (ctx: SagaContext, line: string): Promise<void> => report(ctx, { type: 'log', line });

/** The agent profile for a role: the saga's `--agent` override, else the config's default. */
export function profileFor(ctx: SagaContext, name?: string | null): ResolvedAgentProfile {
  const chosen = name ?? ctx.agent ?? ctx.settings.defaultAgent;
  const profile = ctx.settings.profiles[chosen];
  if (!profile) {
    throw ApplicationFailure.nonRetryable(
      `Unknown agent profile '${chosen}'. Known: ${Object.keys(ctx.settings.profiles).join(', ')}`,
      'UnknownAgentProfile',
    );
  }
  return profile;
}

export const plannerProfile = (ctx: SagaContext): ResolvedAgentProfile => profileFor(ctx);

/**
 * The profile a task runs: the one its plan names, unless that one runs unconfined (`sandbox: none`) while
 * the saga's own (`--agent` or `default_agent`) is confined: a plan, which a planner writes, must not route
 * work out of the sandbox. Then the saga's own profile runs it, and `deviation` says so.
 */
export function taskProfile(
  ctx: SagaContext,
  ref: string,
  named: string | null,
): { profile: ResolvedAgentProfile; deviation: string | null } {
  const own = profileFor(ctx);
  if (!named) return { profile: own, deviation: null };
  const profile = profileFor(ctx, named);
  // Only a route out of the sandbox is refused: when the saga's own profile is unconfined too, it widens nothing.
  if (profile.sandbox !== 'none' || own.sandbox === 'none') return { profile, deviation: null };
  return {
    profile: own,
    deviation:
      `Deviation: task ${ref} names agent profile '${named}', which runs UNCONFINED (sandbox: none); only ` +
      `--agent or default_agent may choose an unconfined profile, so '${own.name}' runs it.`,
  };
}

/**
 * The planning phase's scratch worktree (detached at the base commit): discovery's commands, the planner
 * and the plan reviewer run there, never in the user's checkout.
 */
export const planningWorktree = (ctx: SagaContext): string => worktreePath(ctx, 'planning');
