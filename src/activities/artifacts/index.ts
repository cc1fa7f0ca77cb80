/**
 * Activities that write the saga directory (README "The saga directory"): the spec tree, PROGRESS.md, manifest.md,
 * decisions.md, REPORT.md and free-form artifacts. Every write is atomic (temp file in the same folder,
 * fsync, rename) and idempotent (same input, same bytes; unchanged files are not rewritten). Every path
 * stays inside the saga directory, and the saga directory inside the saga home (saga-files.ts).
 */
import { renderReportMd, type ReportInput } from '../../domain/record/completion-report';
import type { ManifestFront } from '../../domain/record/manifest';
import { prependDecision, updateManifest, type DecisionInput, type ManifestUpdate } from './journal';
import { recordMilestone, type RecordMilestoneInput } from './milestone-records';
import { writeProgress, type ProgressInput } from './progress';
import { createSagaFiles } from './saga-files';
import { correctStoredRationale, writeSpecTree, type SpecTreeInput } from './spec-tree';
import type { DecisionCorrection } from '../../domain/planning/memory';
import { SAGA_FILES } from '../../domain/contract/saga-dir';

export { writeFileAtomic } from './file-io';
export { ARTIFACT_INPUT_ERROR, checkRelPath, PATH_ERROR } from './saga-files';
export { SPEC_INPUT_FILE, type SpecTreeInput } from './spec-tree';
export type { ProgressInput } from './progress';
export type { ManifestUpdate } from './journal';

export function createArtifactActivities(deps: { sagaHome: string }) {
  const files = createSagaFiles(deps.sagaHome);

  return {
    /** SAGA.md plus milestones/NN-slug/MILESTONE.md and milestones/NN-slug/tasks/NN-slug.md. */
    async writeSpecTree(input: SpecTreeInput): Promise<{ files: string[]; costEstimate: string | null }> {
      return writeSpecTree(files, input);
    },

    /** Decisions corrected at acceptance show their corrected choice in SAGA.md's rationale from now on. */
    async correctRationale(input: {
      sagaDir: string;
      corrections: DecisionCorrection[];
      where: string;
      user: string;
    }): Promise<{ updated: boolean }> {
      return { updated: await correctStoredRationale(files, input) };
    },

    /**
     * PROGRESS.md (the whole log, decisions and deviations, integration notes) and, from the same status,
     * the spec tree: every write of the saga's projection goes through here.
     */
    async writeProgress(input: ProgressInput): Promise<{ path: string }> {
      return writeProgress(files, input);
    },

    /** Read, merge, validate and write manifest.md's front matter; the body is kept as it is. */
    async updateManifest(input: ManifestUpdate): Promise<{ front: ManifestFront }> {
      return updateManifest(files, input);
    },

    /** decisions.md keeps its header and lists entries newest first; an entry already present is not re-added. */
    async prependDecision(input: DecisionInput): Promise<{ added: boolean }> {
      return prependDecision(files, input);
    },

    /** An integrated milestone's task states, to its record file (read through the workflow's query). */
    async recordMilestone(input: RecordMilestoneInput): Promise<{ file: string; tasks: number }> {
      return recordMilestone(files, input);
    },

    async writeReport(input: ReportInput & { sagaDir: string }): Promise<{ path: string }> {
      return { path: await files.write(input.sagaDir, SAGA_FILES.report, renderReportMd(input)) };
    },

    /** Any text file under the saga directory (runs/, prompts, evidence); returns the relative path. */
    async writeTextArtifact(input: {
      sagaDir: string;
      relPath: string;
      text: string;
    }): Promise<{ path: string }> {
      return { path: await files.write(input.sagaDir, input.relPath, input.text) };
    },

    /** The file's text, or null when it does not exist. Large files are refused to keep history small. */
    async readTextArtifact(input: {
      sagaDir: string;
      relPath: string;
      maxBytes?: number;
    }): Promise<string | null> {
      return files.read(input.sagaDir, input.relPath, input.maxBytes);
    },
  };
}

export type ArtifactActivities = ReturnType<typeof createArtifactActivities>;
