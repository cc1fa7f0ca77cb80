/** The status as `saga status --json` prints it (the CLI contract), shared by the CLI and the saga board. */
import type { SagaStatus } from '../domain/contract/state';
import { milestoneUsage } from './running-agents';

/** The status with each milestone's usage (the sum of its tasks') and flat cost fields added. */
export function statusJson(s: SagaStatus) {
  return {
    ...s,
    costUsd: s.usage?.costUsd ?? 0,
    milestones: s.milestones.map((m) => ({
      ...m,
      usage: milestoneUsage(m),
      costUsd: milestoneUsage(m).costUsd,
      tasks: m.tasks.map((t) => ({ ...t, costUsd: t.usage?.costUsd ?? 0 })),
    })),
  };
}

export type StatusJson = ReturnType<typeof statusJson>;
