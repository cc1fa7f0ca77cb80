/**
 * A killed worker's activities resume at once on its successor, not after their heartbeat timeout (30 s by
 * default): Temporal hands an attempt out again only when its heartbeats stop for that long. Each activity
 * this worker runs is noted in a ledger on the host (its task token and this process's pid) and removed when
 * it ends; a worker starting for the same host fails the attempts of ledger entries whose process is gone,
 * so Temporal retries them now (the retry kills what the dead attempt left running and resumes the agent's
 * session, as it would after the timeout). An entry of a live process is left alone: that worker is running.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { z } from 'zod';

const EntrySchema = z.object({
  taskToken: z.string(),
  pid: z.number().int(),
  activityType: z.string(),
  workflowId: z.string(),
  startedAt: z.string(),
});

/** The ledger of host `hostId` in the saga home. */
export const activityLedgerDir = (sagaHome: string, hostId: string): string =>
  path.join(sagaHome, '.workers', hostId.replace(/[^A-Za-z0-9._-]/g, '_'), 'running');

const entryFile = (dir: string, taskToken: Uint8Array) =>
  path.join(dir, `${createHash('sha256').update(taskToken).digest('hex').slice(0, 32)}.json`);

/** Notes each activity in the ledger while it runs (a ledger that cannot be written never fails the work). */
export function activityLedger(dir: string): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const { taskToken, activityType, workflowExecution } = ctx.info;
        const file = entryFile(dir, taskToken);
        const entry = {
          taskToken: Buffer.from(taskToken).toString('base64'),
          pid: process.pid,
          activityType,
          workflowId: workflowExecution?.workflowId ?? '',
          startedAt: new Date().toISOString(),
        };
        const noted = fs
          .mkdir(dir, { recursive: true })
          .then(() => fs.writeFile(file, JSON.stringify(entry)))
          .then(
            () => true,
            () => false,
          );
        try {
          return await next(input);
        } finally {
          if (await noted) await fs.rm(file, { force: true });
        }
      },
    },
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Fails the attempts a dead worker of this host left in the ledger; returns how many Temporal took (an
 * attempt already timed out or finished is simply gone).
 */
export async function failOrphanedActivities(client: Client, dir: string): Promise<number> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  let failed = 0;
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const file = path.join(dir, name);
    const parsed = EntrySchema.safeParse(
      JSON.parse(await fs.readFile(file, 'utf8').catch(() => 'null')) as unknown,
    );
    if (parsed.success && processAlive(parsed.data.pid)) continue;
    await fs.rm(file, { force: true });
    if (!parsed.success) continue;
    const { taskToken, pid, activityType } = parsed.data;
    const failure = ApplicationFailure.retryable(
      `The worker running this ${activityType} attempt (pid ${pid}) is gone; retried at once by its successor.`,
      'WorkerGone',
    );
    try {
      await client.activity.fail(Buffer.from(taskToken, 'base64'), failure);
      failed++;
    } catch {
      // Already retried after its heartbeat timeout, completed, or its workflow ended: nothing to do.
    }
  }
  return failed;
}
