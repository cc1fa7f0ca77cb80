/** Process checks the tests share. */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Alive and not a zombie: this machine's init never reaps orphans, so dead processes linger as zombies
 * (state Z or X in /proc/<pid>/stat). Without /proc, `kill(pid, 0)` alone decides.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return true;
  }
}

/**
 * Host pids of the running processes whose environment holds `entry` (`NAME=value`). A confined agent
 * logs its pid inside its own PID namespace, which means nothing on the host; its environment does.
 */
export function processesWithEnv(entry: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (
        readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(entry) &&
        isRunning(Number(name))
      ) {
        pids.push(Number(name));
      }
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * Host pids of the running processes whose command line contains `text` (e.g. `sleep 61.25`): a process
 * started inside the sandbox is found by what it runs, as the pid it sees is its namespace's.
 */
export function processesRunning(text: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter(isRunning);
}
