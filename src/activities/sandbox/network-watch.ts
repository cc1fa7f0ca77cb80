/**
 * Whether a confined run can reach its model API: the names its sandbox refused (looked up, not in the
 * allow-list) and the allowed endpoints the worker could not reach, against the connections that were made.
 * A run that keeps being refused with no connection made for UNREACHABLE_WAIT_MS is stopped at once, with
 * the hosts it tried, the allow-list and the `network:` line that fixes it; a CLI whose model API answers
 * is never stopped (its connection counts), whatever else it tries.
 */
import { NameRefusedError } from './network-bridge';

export const UNREACHABLE_WAIT_MS = 30_000;
/** Refusals this far apart are a retry, not one lookup's pair of questions (IPv4 and IPv6). */
const RETRY_GAP_MS = 2_000;

export class NetworkWatch {
  private readonly names = new Map<string, number>();
  private readonly unreachable = new Set<string>();
  private firstAt: number | null = null;
  private lastAt = 0;
  private connectedOnce = false;
  private timer: NodeJS.Timeout | undefined;
  private stopRun: ((reason: string) => void) | null = null;

  constructor(
    private readonly what: { profile: string; allowList: string[] },
    private readonly waitMs = UNREACHABLE_WAIT_MS,
  ) {}

  /** Hands `runProcess` its stopper. */
  readonly stopper = (stop: (reason: string) => void) => {
    this.stopRun = stop;
  };

  refused(err: Error): void {
    if (err instanceof NameRefusedError) this.names.set(err.host, (this.names.get(err.host) ?? 0) + 1);
    else this.unreachable.add(err.message);
    const now = Date.now();
    this.lastAt = now;
    if (this.firstAt !== null || this.connectedOnce) return;
    this.firstAt = now;
    this.timer = setTimeout(() => this.judge(), this.waitMs);
  }

  connected(): void {
    this.connectedOnce = true;
    clearTimeout(this.timer);
  }

  private judge(): void {
    if (this.connectedOnce) return;
    // Still trying: a retry after the first refusal, and one in the second half of the wait.
    const retryGap = Math.min(RETRY_GAP_MS, this.waitMs / 10);
    if (this.lastAt - this.firstAt! >= retryGap && Date.now() - this.lastAt <= this.waitMs / 2) {
      this.stopRun?.(this.reason()!);
      return;
    }
    // Not tried again lately (a version check the CLI does without): the next refusal starts a new wait.
    this.firstAt = null;
  }

  /** Why the run could not reach its model API; null when a connection was made or nothing was refused. */
  reason(): string | null {
    if (this.connectedOnce || (this.names.size === 0 && this.unreachable.size === 0)) return null;
    const { profile, allowList } = this.what;
    const names = [...this.names.keys()];
    const tried = [...this.names].map(([host, n]) => `${host} (${n} time${n === 1 ? '' : 's'})`);
    // Its allowed endpoints first: one of them is most likely its model API.
    const parts = [
      ...[...this.unreachable].map((why) => `the allowed endpoint ${why}`),
      ...(tried.length ? [`the sandbox refused ${tried.join(', ')}`] : []),
    ];
    const where = `under agents.${profile} in saga.config.yaml`;
    const fixes = [
      ...(this.unreachable.size ? ['make its allowed model API reachable from this machine'] : []),
      ...(names.length === 1
        ? [`if ${names[0]} is its model API, allow it: \`network: ["${names[0]}:PORT"]\` ${where}`]
        : names.length > 1
          ? [`if one of ${names.join(', ')} is its model API, allow it: \`network: ["HOST:PORT"]\` ${where}`]
          : [`or allow the right one: \`network: ["HOST:PORT"]\` ${where}`]),
    ];
    return (
      `agent ${profile} could not reach its model API from saga's sandbox: ${parts.join('; ')}, and no ` +
      `connection was made. The sandbox's network allow-list: ${allowList.join(', ') || 'nothing'}. ` +
      `Fix: ${fixes.join('; ')}; run 'saga doctor --agent ${profile}'`
    );
  }

  close(): void {
    clearTimeout(this.timer);
  }
}
