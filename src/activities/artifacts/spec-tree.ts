/**
 * The spec tree (README "The saga directory"): SAGA.md plus milestones/NN-slug/MILESTONE.md and
 * milestones/NN-slug/tasks/NN-slug.md, written when the plan is and rendered again as the saga's status
 * changes.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { planEstimate, planEstimateText } from '../../domain/fleet/budget';
import type { Environment } from '../../domain/planning/environment';
import type { FlagsResult } from '../../domain/contract/flags-result';
import { announceModes } from '../../domain/request/mode-resolution';
import { milestoneDirName, taskFileName } from '../../domain/contract/naming';
import { validatePlan, type Plan } from '../../domain/plan';
import {
  findTaskState,
  renderMilestoneMd,
  renderRationaleBlock,
  renderSagaMd,
  renderTaskMd,
} from '../../domain/record/render';
import type { SagaStatus } from '../../domain/contract/state';
import { correctedRationale } from '../../domain/saga/decision-fixes';
import type { DecisionCorrection } from '../../domain/planning/memory';
import { earlierCostRecords } from './cost-records';
import { lockFile } from './file-io';
import { badInput, isBelow, type SagaFiles } from './saga-files';
import { SAGA_FILES } from '../../domain/contract/saga-dir';

export interface SpecTreeInput {
  sagaDir: string;
  name: string;
  plan: Plan;
  environment: Environment | null;
  /** Current saga state; null/absent while planning (before any task state exists). */
  status?: SagaStatus | null;
  /** Shown verbatim under "Flags"; when absent it is built from `flags` (the announcement at the saga's start). */
  flagsAnnouncement?: string;
  flags?: FlagsResult;
  /** Questions the autonomous planner asked the user instead of deciding (SAGA.md rationale block). */
  askedBack?: string[];
}

/** What the last spec tree was rendered from, kept so later re-renders keep its rationale and flags text. */
interface StoredSpecInput {
  name: string;
  plan: Plan;
  environment: Environment | null;
  flagsAnnouncement: string;
  autonomous?: boolean;
  askedBack?: string[];
  /** Set when the plan was written: the estimate stays what the approver saw. */
  costEstimate?: string | null;
}

/** Machine-kept file of the projection (not for people; never read back as saga state). */
export const SPEC_INPUT_FILE = 'runs/spec-tree-input.json';

/** The spec tree of a (validated) plan, with the plan's cost estimate from the earlier sagas' records. */
export async function writeSpecTree(
  files: SagaFiles,
  input: SpecTreeInput,
): Promise<{ files: string[]; costEstimate: string | null }> {
  const checked = validatePlan(input.plan, 'plan');
  if (!checked.ok)
    throw badInput(`Cannot write the spec tree of an invalid plan: ${checked.errors.join('; ')}`);
  const taskCount = checked.plan.milestones.reduce((n, m) => n + m.tasks.length, 0);
  const estimate = planEstimate(taskCount, await earlierCostRecords(files, input.sagaDir));
  const costEstimate = estimate ? planEstimateText(estimate) : null;
  const spec: StoredSpecInput = {
    name: input.name,
    plan: checked.plan,
    environment: input.environment,
    flagsAnnouncement:
      input.flagsAnnouncement ??
      (input.flags ? announceModes(input.flags, { product: 'Saga', workflow: 'saga' }) : ''),
    ...(input.flags ? { autonomous: input.flags.autonomous } : {}),
    ...(input.askedBack ? { askedBack: input.askedBack } : {}),
    ...(costEstimate ? { costEstimate } : {}),
  };
  const release = await lockFile(path.join(input.sagaDir, SAGA_FILES.saga));
  try {
    await files.write(input.sagaDir, SPEC_INPUT_FILE, `${JSON.stringify(spec, null, 2)}\n`);
    const written = await renderSpecTree(files, input.sagaDir, spec, input.status ?? null);
    await pruneStaleSpecs(files, input.sagaDir, spec.plan);
    return { files: written, costEstimate };
  } finally {
    release();
  }
}

/** What re-renders the spec tree: the saga's status, and the workflow's plan and environment when given. */
export interface SpecTreeRefresh {
  sagaDir: string;
  status: SagaStatus;
  /**
   * The approved plan as the workflow holds it now (acceptance milestones included) and the discovered
   * environment: when given, SAGA.md, MILESTONE.md and the task specs are re-rendered from `status` too.
   * Without a plan, the last spec tree written is re-rendered with the current status.
   */
  plan?: Plan | null;
  environment?: Environment | null;
}

/** The spec tree again, from the current status (and the workflow's plan when given). */
export async function refreshSpecTree(files: SagaFiles, input: SpecTreeRefresh): Promise<void> {
  const release = await lockFile(path.join(input.sagaDir, SAGA_FILES.saga));
  try {
    const stored = await readStoredSpec(files, input.sagaDir);
    if (!input.plan && !stored) return; // planning has not written a spec tree yet
    const plan: Plan = input.plan
      ? { ...input.plan, rationale: stored?.plan.rationale ?? input.plan.rationale }
      : stored!.plan;
    await renderSpecTree(
      files,
      input.sagaDir,
      {
        name: stored?.name ?? input.status.name,
        plan,
        environment: input.environment ?? stored?.environment ?? null,
        flagsAnnouncement:
          stored?.flagsAnnouncement ??
          announceModes(input.status.flags, { product: 'Saga', workflow: 'saga' }),
        autonomous: stored?.autonomous ?? input.status.flags.autonomous,
        askedBack: stored?.askedBack ?? [],
        costEstimate: stored?.costEstimate ?? null,
      },
      input.status,
    );
  } finally {
    release();
  }
}

/**
 * Corrections made at acceptance: the stored rationale shows the corrected choices, so every later render
 * of SAGA.md (the projector's next write) has them; false when no spec tree was written.
 */
export async function correctStoredRationale(
  files: SagaFiles,
  input: { sagaDir: string; corrections: DecisionCorrection[]; where: string; user: string },
): Promise<boolean> {
  const release = await lockFile(path.join(input.sagaDir, SAGA_FILES.saga));
  try {
    const stored = await readStoredSpec(files, input.sagaDir);
    if (!stored) return false;
    const rationale = correctedRationale(stored.plan.rationale ?? [], input.corrections, input);
    const spec = { ...stored, plan: { ...stored.plan, rationale } };
    await files.write(input.sagaDir, SPEC_INPUT_FILE, `${JSON.stringify(spec, null, 2)}\n`);
    return true;
  } finally {
    release();
  }
}

async function renderSpecTree(
  files: SagaFiles,
  sagaDir: string,
  spec: StoredSpecInput,
  status: SagaStatus | null,
): Promise<string[]> {
  const written = [
    await files.write(
      sagaDir,
      SAGA_FILES.saga,
      renderSagaMd({
        name: spec.name,
        status,
        plan: spec.plan,
        environment: spec.environment,
        flagsAnnouncement: spec.flagsAnnouncement,
        autonomous: spec.autonomous,
        askedBack: spec.askedBack,
        costEstimate: spec.costEstimate ?? null,
      }),
    ),
  ];
  // Every artifact made under --autonomous carries the rationale block, not SAGA.md alone.
  const rationale = spec.autonomous ? renderRationaleBlock(spec.plan, true, spec.askedBack) : '';
  for (const m of spec.plan.milestones) {
    const dir = `milestones/${milestoneDirName(m.id, m.slug)}`;
    const state = status?.milestones.find((s) => s.id === m.id);
    written.push(
      await files.write(sagaDir, `${dir}/${SAGA_FILES.milestone}`, renderMilestoneMd(m, state, rationale)),
    );
    for (const t of m.tasks) {
      const text = renderTaskMd(m.id, t, findTaskState(status, m.id, t.id), rationale);
      written.push(await files.write(sagaDir, `${dir}/tasks/${taskFileName(t.id, t.slug)}`, text));
    }
  }
  return written;
}

async function readStoredSpec(files: SagaFiles, sagaDir: string): Promise<StoredSpecInput | null> {
  const text = await files.read(sagaDir, SPEC_INPUT_FILE).catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text) as StoredSpecInput;
  } catch {
    return null; // a broken copy only costs the rationale block; the next planning write replaces it
  }
}

/** Remove milestone folders and task specs a revised plan no longer has (only names we generate). */
async function pruneStaleSpecs(files: SagaFiles, sagaDir: string, plan: Plan): Promise<void> {
  const root = (await files.sagaRoot(sagaDir, false))!;
  const milestonesDir = await fs.realpath(path.join(root, 'milestones')).catch(() => null);
  if (milestonesDir === null || !isBelow(root, milestonesDir)) return;
  const wanted = new Map(
    plan.milestones.map((m) => [
      milestoneDirName(m.id, m.slug),
      new Set(m.tasks.map((t) => taskFileName(t.id, t.slug))),
    ]),
  );
  for (const entry of await fs.readdir(milestonesDir, { withFileTypes: true })) {
    if (!/^\d+-[a-z0-9-]+$/.test(entry.name)) continue;
    const tasks = wanted.get(entry.name);
    if (!tasks) {
      await fs.rm(path.join(milestonesDir, entry.name), { recursive: true, force: true });
      continue;
    }
    const tasksDir = path.join(milestonesDir, entry.name, 'tasks');
    for (const file of await fs.readdir(tasksDir).catch(() => [] as string[])) {
      if (/^\d+-[a-z0-9-]+\.md$/.test(file) && !tasks.has(file))
        await fs.rm(path.join(tasksDir, file), { force: true });
    }
  }
}
