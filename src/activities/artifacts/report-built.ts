/**
 * What REPORT.md says was built, read when the report is written: each task's diff stat from git (its merge
 * into the integration branch) and the summary its agent wrote in its last run's report, if it wrote one.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { TaskBuilt } from '../../domain/record/report-built';
import type { MilestoneState } from '../../domain/contract/state';
import { taskDiffStats } from '../git-ops/task-diff-stats';
import { readHead } from '../agents/run-files';

/** Enough of a report for its summary; a larger one is not read whole. */
const REPORT_READ_MAX = 64 * 1024;
const SUMMARY_MAX = 600;

/** The label's delegation and attempt (`m1t2-d1-a3`), to find a task's latest implementer run. */
const RUN_LABEL = /^(.+)-d(\d+)-a(\d+)$/;

/** The `summary` of the task's latest implementer report, if it wrote one (agent text: data only). */
async function agentSummary(sagaDir: string, key: string): Promise<string | null> {
  const runs = await fs.readdir(path.join(sagaDir, 'runs')).catch(() => [] as string[]);
  const latest = runs
    .map((name) => ({ name, m: RUN_LABEL.exec(name) }))
    .filter((r) => r.m?.[1] === key)
    .sort((a, b) => Number(b.m![2]) - Number(a.m![2]) || Number(b.m![3]) - Number(a.m![3]));
  for (const run of latest) {
    const text = await readHead(path.join(sagaDir, 'runs', run.name, 'report.json'), REPORT_READ_MAX);
    if (!text?.trim()) continue;
    try {
      const summary = (JSON.parse(text) as { summary?: unknown }).summary;
      return typeof summary === 'string' && summary.trim() ? summary.trim().slice(0, SUMMARY_MAX) : null;
    } catch {
      return null;
    }
  }
  return null;
}

export async function builtForReport(input: {
  repo: string;
  base: string;
  integrationBranch: string;
  sagaDir: string;
  milestones: MilestoneState[];
}): Promise<Record<string, TaskBuilt>> {
  const tasks = input.milestones.flatMap((m) => m.tasks);
  const commits = tasks.flatMap((t) => (t.commit ? [t.commit] : []));
  const stats = await taskDiffStats(input.repo, input.base, input.integrationBranch, commits).catch(
    () => new Map(),
  );
  const built: Record<string, TaskBuilt> = {};
  for (const t of tasks) {
    built[t.id] = {
      summary: await agentSummary(input.sagaDir, t.key),
      diff: t.commit ? (stats.get(t.commit) ?? null) : null,
    };
  }
  return built;
}
