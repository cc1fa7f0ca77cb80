/**
 * Activities that write the saga directory (DESIGN.md 4.5): the spec tree, PROGRESS.md, manifest.md,
 * decisions.md, REPORT.md and free-form artifacts. Every write is atomic (temp file in the same folder,
 * fsync, rename) and idempotent (same input, same bytes; unchanged files are not rewritten). Every path
 * stays inside the saga directory, and the saga directory inside the saga home: `..`, absolute paths and
 * symlinks leading out are refused with a non-retryable failure, since retrying cannot fix them.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { Environment } from '../domain/environment';
import { announceModes, type FlagsResult } from '../domain/flags';
import { milestoneDirName, taskFileName } from '../domain/naming';
import { validatePlan, type Plan } from '../domain/plan';
import {
  DECISIONS_HEADER,
  MANIFEST_LIST_KEYS,
  ManifestFrontSchema,
  findTaskState,
  parseManifest,
  renderDecisionEntry,
  renderManifest,
  renderMilestoneMd,
  renderProgressMd,
  renderReportMd,
  renderSagaMd,
  renderTaskMd,
  type ManifestFront,
  type ManifestFrontInput,
  type ProgressExtra,
  type ReportInput,
} from '../domain/render';
import { decisionNotes, integrationNotes, mergeLog } from '../domain/progress-log';
import type { SagaStatus } from '../domain/state';
import {
  planEstimate,
  planEstimateText,
  sagaCostRecord,
  SAGA_COST_RECORD_FILE,
  SagaCostRecordSchema,
  type SagaCostRecord,
} from '../domain/budget';

/** Failure type of every refused path (non-retryable). */
export const PATH_ERROR = 'SagaPathError';
/** Failure type of input that cannot be written as asked (invalid plan, broken manifest...). */
export const ARTIFACT_INPUT_ERROR = 'SagaArtifactInputError';
const DEFAULT_MAX_READ_BYTES = 1024 * 1024;

const refuse = (message: string): ApplicationFailure => ApplicationFailure.nonRetryable(message, PATH_ERROR);
const badInput = (message: string): ApplicationFailure =>
  ApplicationFailure.nonRetryable(message, ARTIFACT_INPUT_ERROR);

/** Strictly below `parent` (never equal), by path arithmetic only. */
function isBelow(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}
const isAtOrBelow = (parent: string, child: string): boolean => parent === child || isBelow(parent, child);

/**
 * Read-modify-write of one file (manifest.md, decisions.md) is serialised within this worker: the saga and its
 * child workflows write the same files from concurrent activities, and must not drop each other's entries.
 */
const fileLocks = new Map<string, Promise<void>>();
async function lockFile(file: string): Promise<() => void> {
  const previous = fileLocks.get(file) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  fileLocks.set(file, tail);
  await previous;
  return () => {
    release();
    if (fileLocks.get(file) === tail) fileLocks.delete(file);
  };
}

/** Real path of the nearest existing ancestor (or the path itself): where a mkdir would actually land. */
async function realExistingAncestor(p: string): Promise<string> {
  for (let current = p; ; current = path.dirname(current)) {
    try {
      return await fs.realpath(current);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || path.dirname(current) === current) throw err;
    }
  }
}

export function checkRelPath(relPath: string): void {
  if (typeof relPath !== 'string' || relPath.trim() === '') throw refuse('Artifact path is empty.');
  if (relPath.includes('\0')) throw refuse(`Artifact path ${JSON.stringify(relPath)} contains a NUL byte.`);
  if (path.isAbsolute(relPath) || /^[a-zA-Z]:/.test(relPath) || relPath.startsWith('\\')) {
    throw refuse(`Artifact path '${relPath}' is absolute; give a path relative to the saga directory.`);
  }
  if (relPath.split(/[\\/]+/).includes('..')) {
    throw refuse(`Artifact path '${relPath}' contains '..'; artifacts must stay inside the saga directory.`);
  }
}

/** Write `text` to `file` atomically; returns false when the file already held exactly this text. */
export async function writeFileAtomic(file: string, text: string): Promise<boolean> {
  const stat = await fs.lstat(file).catch(() => null);
  if (stat?.isFile() && (await fs.readFile(file, 'utf8')) === text) return false;
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await fs.open(tmp, 'wx', 0o644);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  // Make the rename itself durable; some platforms cannot open directories, which is fine to skip.
  const dirHandle = await fs.open(dir, 'r').catch(() => null);
  if (dirHandle)
    await dirHandle
      .sync()
      .catch(() => undefined)
      .finally(() => dirHandle.close());
  return true;
}

export interface SpecTreeInput {
  sagaDir: string;
  name: string;
  plan: Plan;
  environment: Environment | null;
  /** Current saga state; null/absent while planning (before any task state exists). */
  status?: SagaStatus | null;
  /** Shown verbatim under "Flags"; when absent it is built from `flags` (seed 000 announcement). */
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

/** Machine-kept files of the projection (not for people; never read back as saga state). */
export const SPEC_INPUT_FILE = 'runs/spec-tree-input.json';
/** The whole saga log, oldest first, one JSON string per line (PROGRESS.md shows it newest first). */
export const PROGRESS_LOG_FILE = 'runs/progress-log.jsonl';

export interface ProgressInput {
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

export interface ManifestUpdate {
  sagaDir: string;
  /** Fields to set. `flags` and scalars replace; list fields replace too unless `append` is set. */
  patch: Partial<ManifestFrontInput>;
  /**
   * Append the patch's list items (auto_picked_checkpoints, autonomous_decisions, quality_locked_history)
   * instead of replacing the lists. An item equal to one already present is skipped, so a retried
   * activity never logs the same entry twice.
   */
  append?: boolean;
}

export function createArtifactActivities(deps: { sagaHome: string }) {
  const home = path.resolve(deps.sagaHome);

  /**
   * The real saga directory after checking it cannot lead out of the saga home. With `create` it is made
   * when missing; without, a missing directory gives null.
   */
  async function sagaRoot(sagaDir: string, create: boolean): Promise<string | null> {
    if (typeof sagaDir !== 'string' || !path.isAbsolute(sagaDir)) {
      throw refuse(`Saga directory '${sagaDir}' must be an absolute path inside the saga home ${home}.`);
    }
    const resolved = path.resolve(sagaDir);
    if (!isBelow(home, resolved))
      throw refuse(`Saga directory '${sagaDir}' is not inside the saga home ${home}.`);
    const escape = () =>
      refuse(`Saga directory '${sagaDir}' leads out of the saga home ${home} through a symlink.`);
    if (create) await fs.mkdir(home, { recursive: true });
    const realHome = await fs.realpath(home).catch(() => null);
    if (realHome === null) return null;
    if (!isAtOrBelow(realHome, await realExistingAncestor(resolved))) throw escape();
    if (create) await fs.mkdir(resolved, { recursive: true });
    const real = await fs.realpath(resolved).catch(() => null);
    if (real !== null && !isBelow(realHome, real)) throw escape();
    return real;
  }

  /** Absolute path of `relPath` inside the saga directory (parent folder created safely when writing). */
  async function artifactPath(sagaDir: string, relPath: string, create: boolean) {
    checkRelPath(relPath);
    const root = await sagaRoot(sagaDir, create);
    if (root === null) return null;
    const target = path.join(root, relPath);
    if (!isBelow(root, target))
      throw refuse(`Artifact path '${relPath}' does not name a file inside ${sagaDir}.`);
    const parent = path.dirname(target);
    const escape = () => refuse(`Artifact path '${relPath}' leads out of ${sagaDir} through a symlink.`);
    if (!isAtOrBelow(root, await realExistingAncestor(parent))) throw escape();
    if (create) {
      await fs.mkdir(parent, { recursive: true });
      if (!isAtOrBelow(root, await fs.realpath(parent))) throw escape();
    }
    return { root, target };
  }

  async function write(sagaDir: string, relPath: string, text: string): Promise<string> {
    const { target } = (await artifactPath(sagaDir, relPath, true))!;
    await writeFileAtomic(target, text);
    return relPath;
  }

  async function read(
    sagaDir: string,
    relPath: string,
    maxBytes = DEFAULT_MAX_READ_BYTES,
  ): Promise<string | null> {
    const resolved = await artifactPath(sagaDir, relPath, false);
    if (resolved === null) return null;
    const real = await fs.realpath(resolved.target).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (real === null) return null;
    if (!isBelow(resolved.root, real))
      throw refuse(`Artifact '${relPath}' leads out of ${sagaDir} through a symlink.`);
    const { size } = await fs.stat(real);
    if (size > maxBytes) {
      throw badInput(
        `Artifact '${relPath}' is ${size} bytes, over the ${maxBytes}-byte limit for reading it back.`,
      );
    }
    return fs.readFile(real, 'utf8');
  }

  /** Remove milestone folders and task specs a revised plan no longer has (only names we generate). */
  async function pruneStaleSpecs(sagaDir: string, plan: Plan): Promise<void> {
    const root = (await sagaRoot(sagaDir, false))!;
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

  async function renderSpecTree(
    sagaDir: string,
    spec: StoredSpecInput,
    status: SagaStatus | null,
  ): Promise<string[]> {
    const files = [
      await write(
        sagaDir,
        'SAGA.md',
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
    for (const m of spec.plan.milestones) {
      const dir = `milestones/${milestoneDirName(m.id, m.slug)}`;
      const state = status?.milestones.find((s) => s.id === m.id);
      files.push(await write(sagaDir, `${dir}/MILESTONE.md`, renderMilestoneMd(m, state)));
      for (const t of m.tasks) {
        const text = renderTaskMd(m.id, t, findTaskState(status, m.id, t.id));
        files.push(await write(sagaDir, `${dir}/tasks/${taskFileName(t.id, t.slug)}`, text));
      }
    }
    return files;
  }

  async function readStoredSpec(sagaDir: string): Promise<StoredSpecInput | null> {
    const text = await read(sagaDir, SPEC_INPUT_FILE).catch(() => null);
    if (text === null) return null;
    try {
      return JSON.parse(text) as StoredSpecInput;
    } catch {
      return null; // a broken copy only costs the rationale block; the next planning write replaces it
    }
  }

  /** The spec tree again, from the current status (and the workflow's plan when given). */
  async function refreshSpecTree(input: ProgressInput): Promise<void> {
    const release = await lockFile(path.join(input.sagaDir, 'SAGA.md'));
    try {
      const stored = await readStoredSpec(input.sagaDir);
      if (!input.plan && !stored) return; // planning has not written a spec tree yet
      const plan: Plan = input.plan
        ? { ...input.plan, rationale: stored?.plan.rationale ?? input.plan.rationale }
        : stored!.plan;
      await renderSpecTree(
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

  /** The cost records of the other sagas in this saga home (unreadable ones are skipped: only an estimate). */
  async function earlierCostRecords(sagaDir: string): Promise<SagaCostRecord[]> {
    const own = path.resolve(sagaDir);
    const entries = await fs.readdir(home, { withFileTypes: true }).catch(() => []);
    const records: SagaCostRecord[] = [];
    for (const entry of entries) {
      const dir = path.join(home, entry.name);
      if (!entry.isDirectory() || entry.name.startsWith('.') || dir === own) continue;
      const text = await read(dir, SAGA_COST_RECORD_FILE).catch(() => null);
      if (text === null) continue;
      try {
        const parsed = SagaCostRecordSchema.safeParse(JSON.parse(text));
        if (parsed.success) records.push(parsed.data);
      } catch {
        // not JSON: skipped
      }
    }
    return records;
  }

  /** At the saga's end (complete or cancelled): what its tasks cost, for later plans' estimates. */
  async function writeCostRecord(sagaDir: string, status: SagaStatus): Promise<void> {
    const existing = await read(sagaDir, SAGA_COST_RECORD_FILE).catch(() => null);
    let finishedAt = new Date().toISOString();
    try {
      // A retried write keeps the first time (same input, same bytes).
      if (existing) finishedAt = SagaCostRecordSchema.parse(JSON.parse(existing)).finishedAt;
    } catch {
      // a broken record is replaced
    }
    const record = sagaCostRecord(status, finishedAt);
    await write(sagaDir, SAGA_COST_RECORD_FILE, `${JSON.stringify(record, null, 2)}\n`);
  }

  /** The whole log, oldest first: the one on disk extended by the status's recent lines. */
  async function appendProgressLog(sagaDir: string, status: SagaStatus): Promise<string[]> {
    const release = await lockFile(path.join(sagaDir, PROGRESS_LOG_FILE));
    try {
      const text = (await read(sagaDir, PROGRESS_LOG_FILE, Number.MAX_SAFE_INTEGER)) ?? '';
      const recorded = text
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          try {
            return String(JSON.parse(line));
          } catch {
            return line; // a line cut by a crash mid-write is kept as it is
          }
        });
      const merged = mergeLog(recorded, status.log);
      if (merged !== recorded)
        await write(sagaDir, PROGRESS_LOG_FILE, merged.map((l) => `${JSON.stringify(l)}\n`).join(''));
      return merged;
    } finally {
      release();
    }
  }

  return {
    /** SAGA.md plus milestones/NN-slug/MILESTONE.md and milestones/NN-slug/tasks/NN-slug.md. */
    async writeSpecTree(input: SpecTreeInput): Promise<{ files: string[]; costEstimate: string | null }> {
      const checked = validatePlan(input.plan, 'plan');
      if (!checked.ok)
        throw badInput(`Cannot write the spec tree of an invalid plan: ${checked.errors.join('; ')}`);
      const taskCount = checked.plan.milestones.reduce((n, m) => n + m.tasks.length, 0);
      const estimate = planEstimate(taskCount, await earlierCostRecords(input.sagaDir));
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
      const release = await lockFile(path.join(input.sagaDir, 'SAGA.md'));
      try {
        await write(input.sagaDir, SPEC_INPUT_FILE, `${JSON.stringify(spec, null, 2)}\n`);
        const files = await renderSpecTree(input.sagaDir, spec, input.status ?? null);
        await pruneStaleSpecs(input.sagaDir, spec.plan);
        return { files, costEstimate };
      } finally {
        release();
      }
    },

    /**
     * PROGRESS.md (the whole log, decisions and deviations, integration notes) and, from the same status,
     * the spec tree: every write of the saga's projection goes through here.
     */
    async writeProgress(input: ProgressInput): Promise<{ path: string }> {
      const log = await appendProgressLog(input.sagaDir, input.status);
      const decisionsMd = await read(input.sagaDir, 'decisions.md').catch(() => null);
      const extra: ProgressExtra = {
        integrationNotes: integrationNotes(input.status, log),
        decisions: decisionNotes(log, decisionsMd),
        log: [...log].reverse(),
      };
      const written = await write(input.sagaDir, 'PROGRESS.md', renderProgressMd(input.status, extra));
      await refreshSpecTree(input);
      if (input.status.phase === 'complete' || input.status.phase === 'cancelled')
        await writeCostRecord(input.sagaDir, input.status);
      return { path: written };
    },

    /** Read, merge, validate and write manifest.md's front matter; the body is kept as it is. */
    async updateManifest(input: ManifestUpdate): Promise<{ front: ManifestFront }> {
      const release = await lockFile(path.join(input.sagaDir, 'manifest.md'));
      try {
        const existingText = await read(input.sagaDir, 'manifest.md');
        let current: { front: ManifestFront; body: string } | null = null;
        if (existingText !== null) {
          try {
            current = parseManifest(existingText);
          } catch (err) {
            throw badInput(`${(err as Error).message} (in ${input.sagaDir}); fix or remove the file.`);
          }
        }
        const merged: Record<string, unknown> = { ...current?.front, ...input.patch };
        if (input.append && current) {
          for (const key of MANIFEST_LIST_KEYS) {
            const additions = input.patch[key];
            if (!additions) continue;
            const seen = new Set(current.front[key].map((item) => JSON.stringify(item)));
            const parsedAdditions = ManifestFrontSchema.shape[key].parse(additions) as unknown[];
            merged[key] = [
              ...current.front[key],
              ...parsedAdditions.filter((item) => !seen.has(JSON.stringify(item))),
            ];
          }
        }
        const parsed = ManifestFrontSchema.safeParse(merged);
        if (!parsed.success) {
          const issues = parsed.error.issues.map(
            (i) => `${i.path.join('.') || '(front matter)'}: ${i.message}`,
          );
          const hint = current
            ? ''
            : ' (manifest.md does not exist yet: the first update must set saga, flags, execution_mode)';
          throw badInput(`Invalid manifest update${hint}: ${issues.join('; ')}`);
        }
        await write(input.sagaDir, 'manifest.md', renderManifest(parsed.data, current?.body));
        return { front: parsed.data };
      } finally {
        release();
      }
    },

    /** decisions.md keeps its header and lists entries newest first; an entry already present is not re-added. */
    async prependDecision(input: {
      sagaDir: string;
      entry: { at: string; title: string; lines: string[] };
    }): Promise<{ added: boolean }> {
      const release = await lockFile(path.join(input.sagaDir, 'decisions.md'));
      try {
        let entry: string;
        try {
          entry = renderDecisionEntry(input.entry);
        } catch (err) {
          throw badInput((err as Error).message);
        }
        const existing = (await read(input.sagaDir, 'decisions.md')) ?? '';
        const firstEntry = existing.search(/^### /m);
        const header =
          (firstEntry === -1 ? existing : existing.slice(0, firstEntry)).trim() || DECISIONS_HEADER.trim();
        const entries = firstEntry === -1 ? '' : existing.slice(firstEntry).trim();
        if (entries.includes(entry.trim())) return { added: false };
        await write(
          input.sagaDir,
          'decisions.md',
          `${header}\n\n${entry.trim()}\n${entries ? `\n${entries}\n` : ''}`,
        );
        return { added: true };
      } finally {
        release();
      }
    },

    async writeReport(input: ReportInput & { sagaDir: string }): Promise<{ path: string }> {
      return { path: await write(input.sagaDir, 'REPORT.md', renderReportMd(input)) };
    },

    /** Any text file under the saga directory (runs/, prompts, evidence); returns the relative path. */
    async writeTextArtifact(input: {
      sagaDir: string;
      relPath: string;
      text: string;
    }): Promise<{ path: string }> {
      return { path: await write(input.sagaDir, input.relPath, input.text) };
    },

    /** The file's text, or null when it does not exist. Large files are refused to keep history small. */
    async readTextArtifact(input: {
      sagaDir: string;
      relPath: string;
      maxBytes?: number;
    }): Promise<string | null> {
      return read(input.sagaDir, input.relPath, input.maxBytes);
    },
  };
}

export type ArtifactActivities = ReturnType<typeof createArtifactActivities>;
