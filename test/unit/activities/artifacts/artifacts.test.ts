import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApplicationFailure } from '@temporalio/common';
import {
  ARTIFACT_INPUT_ERROR,
  PATH_ERROR,
  SPEC_INPUT_FILE,
  createArtifactActivities,
  writeFileAtomic,
} from '../../../../src/activities/artifacts';
import type { FlagsResult } from '../../../../src/domain/contract/flags-result';
import type { Plan } from '../../../../src/domain/plan';
import { parsePlanText } from '../../../../src/domain/plan/parse-text';
import type { ManifestFront } from '../../../../src/domain/record/manifest';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { PROJECT_ROOT } from '../../../../src/project-root';

const plan: Plan = (() => {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'plans', 'greeting.yaml'), 'utf8');
  const result = parsePlanText(text, 'greeting.yaml');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.plan;
})();

const flags: FlagsResult = {
  quality_locked: false,
  autonomous: true,
  subagents: false,
  parallel: false,
  goal: 'Add a greeting',
  error: null,
  quality_locked_source: null,
  autonomous_source: 'flag',
  subagents_source: null,
  parallel_source: null,
  parallel_lanes: 0,
  parallel_note: null,
};

const status = (sagaDir: string): SagaStatus => ({
  name: 'add-greeting',
  workflowId: 'saga-add-greeting',
  phase: 'implementation',
  goal: 'Add a greeting',
  repo: '/repos/app',
  flags,
  executionMode: 'inline',
  pending: [],
  milestones: [],
  integrationBranch: 'saga/add-greeting/integration',
  sagaDir,
  uiUrl: '',
  round: 1,
  log: ['started'],
});

const manifestFront: ManifestFront = {
  saga: 'add-greeting',
  flags: {
    quality_locked: false,
    autonomous: true,
    subagents: false,
    parallel: false,
    quality_locked_source: null,
    autonomous_source: 'flag',
    subagents_source: null,
    parallel_source: null,
    parallel_lanes: 0,
    parallel_note: null,
  },
  execution_mode: 'inline',
  auto_picked_checkpoints: [],
  autonomous_decisions: [],
  quality_locked_history: [],
};

let root: string;
let home: string;
let sagaDir: string;
let outside: string;
let artifacts: ReturnType<typeof createArtifactActivities>;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'saga-artifacts-'));
  home = path.join(root, 'home');
  outside = path.join(root, 'outside');
  fs.mkdirSync(outside);
  sagaDir = path.join(home, 'add-greeting');
  artifacts = createArtifactActivities({ sagaHome: home });
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** Every file below `dir`, relative, sorted. */
function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)))
    .sort();
}

async function expectFailure(promise: Promise<unknown>, type: string, message: RegExp): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect(err).toMatchObject({ type, nonRetryable: true });
  expect((err as Error).message).toMatch(message);
}

describe('spec tree', () => {
  test('files land where the saga directory contract says, without temp files, and a rewrite changes nothing', async () => {
    const input = {
      sagaDir,
      name: 'add-greeting',
      plan,
      environment: null,
      status: status(sagaDir),
      flagsAnnouncement: 'Modes: --autonomous',
    };
    const { files } = await artifacts.writeSpecTree(input);
    const expected = [
      'SAGA.md',
      'milestones/01-core/MILESTONE.md',
      'milestones/01-core/tasks/01-add-greet.md',
      'milestones/01-core/tasks/02-greet-default.md',
      'milestones/02-cli/MILESTONE.md',
      'milestones/02-cli/tasks/01-add-cli.md',
    ];
    expect(files.sort()).toEqual(expected);
    // Beside the spec tree: what it was rendered from, for later re-renders with the saga's status.
    expect(listFiles(sagaDir)).toEqual([...expected, SPEC_INPUT_FILE]);
    expect(fs.readFileSync(path.join(sagaDir, 'SAGA.md'), 'utf8')).toContain('Modes: --autonomous');
    expect(fs.readFileSync(path.join(sagaDir, 'milestones/02-cli/tasks/01-add-cli.md'), 'utf8')).toContain(
      '# Task 2.1: Add bin/greet.js',
    );

    const before = expected.map((f) => fs.statSync(path.join(sagaDir, f)).mtimeMs);
    const contents = expected.map((f) => fs.readFileSync(path.join(sagaDir, f), 'utf8'));
    await new Promise((r) => setTimeout(r, 20));
    await artifacts.writeSpecTree(input);
    expect(expected.map((f) => fs.statSync(path.join(sagaDir, f)).mtimeMs)).toEqual(before);
    expect(expected.map((f) => fs.readFileSync(path.join(sagaDir, f), 'utf8'))).toEqual(contents);
  });

  test('a revised plan removes spec files it no longer has and keeps everything else', async () => {
    await artifacts.writeSpecTree({ sagaDir, name: 'add-greeting', plan, environment: null, flags });
    await artifacts.writeTextArtifact({ sagaDir, relPath: 'runs/m1t1/out.txt', text: 'kept' });
    const revised: Plan = {
      ...plan,
      milestones: [{ ...plan.milestones[0], tasks: [{ ...plan.milestones[0].tasks[0], slug: 'greet' }] }],
    };
    await artifacts.writeSpecTree({ sagaDir, name: 'add-greeting', plan: revised, environment: null, flags });
    expect(listFiles(sagaDir)).toEqual([
      'SAGA.md',
      'milestones/01-core/MILESTONE.md',
      'milestones/01-core/tasks/01-greet.md',
      'runs/m1t1/out.txt',
      SPEC_INPUT_FILE,
    ]);
    // Without an explicit announcement, the flags give one.
    expect(fs.readFileSync(path.join(sagaDir, 'SAGA.md'), 'utf8')).toContain('Modes: --autonomous');
  });

  test('an invalid plan is refused without writing', async () => {
    const broken = { ...plan, milestones: [] } as unknown as Plan;
    await expectFailure(
      artifacts.writeSpecTree({ sagaDir, name: 'x', plan: broken, environment: null }),
      ARTIFACT_INPUT_ERROR,
      /invalid plan: plan: milestones: expected a non-empty array of milestones, got an empty array/,
    );
    expect(fs.existsSync(path.join(sagaDir, 'SAGA.md'))).toBe(false);
  });
});

test('PROGRESS.md and REPORT.md', async () => {
  await artifacts.writeProgress({ sagaDir, status: status(sagaDir) });
  await artifacts.writeProgress({ sagaDir, status: { ...status(sagaDir), log: ['later', 'started'] } });
  expect(fs.readFileSync(path.join(sagaDir, 'PROGRESS.md'), 'utf8')).toContain(
    '## Log (newest first)\n\n- later\n- started\n',
  );
  await artifacts.writeReport({
    sagaDir,
    status: status(sagaDir),
    plan,
    exitResults: [{ id: 'E1', result: 'failed', evidence: 'runs/validation/E1.txt' }],
  });
  expect(fs.readFileSync(path.join(sagaDir, 'REPORT.md'), 'utf8')).toContain('| **failed** |');
});

describe('manifest.md', () => {
  test('created, appended to without duplicates, replaced, body kept', async () => {
    await artifacts.updateManifest({ sagaDir, patch: manifestFront });
    const checkpoint = {
      phase: 'plan',
      checkpoint: 'plan-approval',
      decision: 'A',
      timestamp: '2026-05-15T14:23:18Z',
      reason: '--autonomous --quality-locked both active',
      flag_sources: { autonomous: 'flag' as const, quality_locked: 'config' as const },
    };
    await artifacts.updateManifest({
      sagaDir,
      patch: { auto_picked_checkpoints: [checkpoint] },
      append: true,
    });
    // A retried activity appends the same entry again: it is recorded once.
    const { front } = await artifacts.updateManifest({
      sagaDir,
      patch: { auto_picked_checkpoints: [checkpoint] },
      append: true,
    });
    expect(front.auto_picked_checkpoints).toEqual([checkpoint]);

    const file = path.join(sagaDir, 'manifest.md');
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace(/\n---\n[\s\S]*$/, '\n---\nhand-written notes\n'),
    );
    const replaced = await artifacts.updateManifest({
      sagaDir,
      patch: { execution_mode: 'subagents', auto_picked_checkpoints: [] },
    });
    expect(replaced.front).toEqual({ ...manifestFront, execution_mode: 'subagents' });
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toMatch(
      /^---\nsaga: add-greeting\n[\s\S]*\nexecution_mode: subagents\n[\s\S]*\n---\nhand-written notes\n$/,
    );
  });

  test('a first update without saga, flags and execution_mode is refused', async () => {
    await expectFailure(
      artifacts.updateManifest({ sagaDir, patch: { execution_mode: 'inline' }, append: true }),
      ARTIFACT_INPUT_ERROR,
      /manifest\.md does not exist yet.*saga: Required; flags: Required/,
    );
  });
});

describe('decisions.md', () => {
  test('newest first under one header; the same entry twice is recorded once', async () => {
    const first = { at: '2026-05-15T14:23:00Z', title: 'First', lines: ['one'] };
    const second = { at: '2026-05-15T15:00:00Z', title: 'Second', lines: ['two', 'lines'] };
    expect(await artifacts.prependDecision({ sagaDir, entry: first })).toEqual({ added: true });
    expect(await artifacts.prependDecision({ sagaDir, entry: second })).toEqual({ added: true });
    expect(await artifacts.prependDecision({ sagaDir, entry: second })).toEqual({ added: false });
    expect(fs.readFileSync(path.join(sagaDir, 'decisions.md'), 'utf8')).toBe(
      '# Decisions\n\nNewest first. Each entry: when, what was decided, and why.\n\n' +
        '### 2026-05-15 15:00 — Second\ntwo\nlines\n\n' +
        '### 2026-05-15 14:23 — First\none\n',
    );
  });
});

describe('text artifacts', () => {
  test('write and read back in nested folders; a missing file reads as null', async () => {
    expect(
      await artifacts.writeTextArtifact({ sagaDir, relPath: 'runs/m1t1/agent-1.log', text: 'hello' }),
    ).toEqual({
      path: 'runs/m1t1/agent-1.log',
    });
    expect(await artifacts.readTextArtifact({ sagaDir, relPath: 'runs/m1t1/agent-1.log' })).toBe('hello');
    expect(await artifacts.readTextArtifact({ sagaDir, relPath: 'runs/none.txt' })).toBeNull();
    expect(
      await artifacts.readTextArtifact({ sagaDir: path.join(home, 'other'), relPath: 'x.md' }),
    ).toBeNull();
    expect(fs.existsSync(path.join(home, 'other'))).toBe(false);
    await expectFailure(
      artifacts.readTextArtifact({ sagaDir, relPath: 'runs/m1t1/agent-1.log', maxBytes: 2 }),
      ARTIFACT_INPUT_ERROR,
      /over the 2-byte limit/,
    );
  });

  test('an interrupted write leaves neither a temp file nor a half-written target', async () => {
    const dir = path.join(root, 'atomic');
    fs.mkdirSync(path.join(dir, 'target.md'), { recursive: true }); // rename onto a directory fails
    await expect(writeFileAtomic(path.join(dir, 'target.md'), 'text')).rejects.toThrow();
    expect(fs.readdirSync(dir)).toEqual(['target.md']);
    await writeFileAtomic(path.join(dir, 'ok.md'), 'text');
    expect(fs.readdirSync(dir).sort()).toEqual(['ok.md', 'target.md']);
  });
});

describe('paths stay inside the saga directory and the saga home', () => {
  test.each(['../escape.md', 'runs/../../escape.md', '/etc/passwd', '', 'C:\\x.md'])(
    'relative path %p is refused',
    async (relPath) => {
      await expectFailure(
        artifacts.writeTextArtifact({ sagaDir, relPath, text: 'x' }),
        PATH_ERROR,
        /Artifact path/,
      );
      // Refused before anything was created, not even the saga home.
      expect(fs.readdirSync(root)).toEqual(['outside']);
      expect(fs.readdirSync(outside)).toEqual([]);
    },
  );

  test('saga directories outside the saga home, or the home itself, are refused', async () => {
    for (const dir of [outside, home, path.join(home, '..', 'outside'), 'relative/dir']) {
      await expectFailure(
        artifacts.writeTextArtifact({ sagaDir: dir, relPath: 'a.md', text: 'x' }),
        PATH_ERROR,
        /Saga directory/,
      );
    }
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  test('symlinks leading out are refused for writes and reads', async () => {
    fs.mkdirSync(sagaDir, { recursive: true });
    fs.symlinkSync(outside, path.join(sagaDir, 'runs'));
    await expectFailure(
      artifacts.writeTextArtifact({ sagaDir, relPath: 'runs/deep/x.txt', text: 'x' }),
      PATH_ERROR,
      /through a symlink/,
    );
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(sagaDir, 'link.txt'));
    await expectFailure(
      artifacts.readTextArtifact({ sagaDir, relPath: 'link.txt' }),
      PATH_ERROR,
      /through a symlink/,
    );

    fs.symlinkSync(outside, path.join(home, 'evil'));
    await expectFailure(
      artifacts.writeTextArtifact({ sagaDir: path.join(home, 'evil', 'saga'), relPath: 'a.md', text: 'x' }),
      PATH_ERROR,
      /through a symlink/,
    );
    expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
  });
});
