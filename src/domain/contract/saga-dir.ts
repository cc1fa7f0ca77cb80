/**
 * The saga directory's layout (README "The saga directory"): the one place its file names are spelled.
 * Paths are relative to the saga directory; activities join them to it.
 */
export const SAGA_FILES = {
  saga: 'SAGA.md',
  progress: 'PROGRESS.md',
  report: 'REPORT.md',
  decisions: 'decisions.md',
  manifest: 'manifest.md',
  milestone: 'MILESTONE.md',
  /** The whole log, oldest first; the workflow keeps only its recent lines. */
  progressLog: 'runs/progress-log.jsonl',
  /** An integrated milestone's task states, once they left the carried state (saga/milestone-records.ts). */
  milestoneRecords: 'runs/milestones',
} as const;

/** The file of milestone `id`'s task states, relative to the saga directory. */
export const milestoneRecordFile = (id: number): string => `${SAGA_FILES.milestoneRecords}/${id}.json`;

/** The repo's own copy of the decisions (`.sage/decisions.md`), relative to the repo. */
export const REPO_DECISIONS_FILE = '.sage/decisions.md';
