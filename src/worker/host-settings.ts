/**
 * Where this host keeps sagas, what it calls itself and which queue it serves: plain settings from the
 * environment, kept apart from the worker so CLI commands read them without loading the worker runtime.
 */
import os from 'node:os';
import { sagaHomeOf } from '../domain/config/saga-home';
import { WORKFLOW_TASK_QUEUE } from '../domain/contract/naming';
import { EnvironmentError } from './errors';

export const defaultHostId = (): string => process.env.SAGA_HOST_ID || os.hostname();
export const defaultSagaHome = (): string => sagaHomeOf(process.env, os.homedir());
/** Shared queue for workflow tasks; SAGA_TASK_QUEUE separates independent deployments on one namespace. */
export const workflowTaskQueue = (): string => process.env.SAGA_TASK_QUEUE || WORKFLOW_TASK_QUEUE;

/**
 * SAGA_HOST_SLOTS: agents, checks and git steps this host runs at once, over all its sagas (default 16);
 * more wait in Temporal's queue for a free slot.
 */
export function hostActivitySlots(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.SAGA_HOST_SLOTS;
  if (!text) return 16;
  const slots = Number(text);
  if (!Number.isInteger(slots) || slots < 1)
    throw new EnvironmentError(`SAGA_HOST_SLOTS must be a whole number of at least 1, got '${text}'.`);
  return slots;
}

/** SAGA_SHUTDOWN_GRACE_MS: how long running activities may finish after SIGTERM before they are cancelled. */
export function shutdownGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.SAGA_SHUTDOWN_GRACE_MS;
  if (!text) return 10_000;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 0)
    throw new EnvironmentError(
      `SAGA_SHUTDOWN_GRACE_MS must be a whole number of milliseconds, got '${text}'.`,
    );
  return ms;
}
