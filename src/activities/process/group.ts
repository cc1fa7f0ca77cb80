/**
 * Process groups: an agent or check runs in its own group so that the whole tree can be ended, also the
 * group a worker that died mid-run left behind.
 */
import { promises as fs } from 'node:fs';

/** What identifies a process group leader across a crash: its pid and its start time (Linux /proc). */
export interface ProcessGroupRecord {
  pgid: number;
  startTime: string | null;
}

export async function processGroupRecord(pid: number): Promise<ProcessGroupRecord> {
  return { pgid: pid, startTime: await processStartTime(pid) };
}

/**
 * Ends a process group left behind by a worker that died mid-run (a detached group outlives its worker).
 * A live leader with another start time is a reused pid and is left alone; a group whose leader is gone
 * is still the old one, as Linux never hands out a pid that is in use as a process group id.
 */
export async function endLeftoverGroup(record: ProcessGroupRecord, graceMs = 3000): Promise<boolean> {
  const startTime = await processStartTime(record.pgid);
  if (startTime !== null && record.startTime !== null && startTime !== record.startTime) return false;
  if (!(await groupRunning(record.pgid))) return false;
  await endGroup(record.pgid, graceMs);
  return true;
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); null when gone or no /proc. */
async function processStartTime(pid: number): Promise<string | null> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return null;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** SIGTERM what is left of the group, SIGKILL after the grace period; resolves once no member runs. */
export async function endGroup(pgid: number, graceMs: number): Promise<void> {
  if (!(await groupRunning(pgid))) return;
  signalGroup(pgid, 'SIGTERM');
  if (await waitGroupGone(pgid, graceMs)) return;
  signalGroup(pgid, 'SIGKILL');
  await waitGroupGone(pgid, 1000);
}

async function waitGroupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!(await groupRunning(pgid))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !(await groupRunning(pgid));
}

/**
 * Whether any process of the group still runs. kill(-pgid, 0) also counts zombies (an init that never
 * reaps orphans keeps them forever), so on Linux /proc is consulted to ignore them.
 */
async function groupRunning(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  let entries: string[];
  try {
    entries = await fs.readdir('/proc');
  } catch {
    return true; // no /proc (macOS): trust kill(0)
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Fields after the parenthesised command name: state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}
