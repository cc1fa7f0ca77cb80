/** Process checks the tests share. */
import { readFileSync } from 'node:fs';

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
