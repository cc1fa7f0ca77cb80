/**
 * The saga's state schema and its migrations: a state of the previous version (unnumbered, settings from
 * before the heartbeat, handoff, pass_env and on_exhausted settings) becomes a current one with the
 * defaults; a current state passes unchanged; newer or broken states are refused with a message naming why.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createArtifactActivities } from '../../../../src/activities/artifacts';
import { createSagaSetupActivities } from '../../../../src/activities/planning/saga-setup';
import { GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { initialMilestones } from '../../../../src/domain/fleet/fleet';
import { parseFlags } from '../../../../src/domain/request/flags';
import { hostTaskQueue } from '../../../../src/domain/contract/naming';
import { parsePlanText } from '../../../../src/domain/plan/parse-text';
import { migrateSagaState, SAGA_STATE_VERSION, type SagaState } from '../../../../src/domain/saga/saga-state';
import { asVersion1 } from '../../../harness/saga-state';

async function currentState(): Promise<SagaState> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'saga-state-'));
  const settings = await createSagaSetupActivities({
    artifacts: createArtifactActivities({ sagaHome: home }),
  }).loadRunSettings({ repo: home, sagaHome: home });
  const parsed = parsePlanText(readFileSync(GREETING_PLAN_FILE, 'utf8'), 'greeting.yaml');
  if (!parsed.ok) throw new Error(parsed.errors.join('; '));
  return {
    version: SAGA_STATE_VERSION,
    ctx: {
      name: 'greet',
      sagaWorkflowId: 'saga-greet',
      repo: home,
      base: 'main',
      goal: 'Add a greeting',
      sagaDir: path.join(home, 'greet'),
      worktreeRoot: home,
      hostQueue: hostTaskQueue('h1'),
      flags: parseFlags('--parallel=2 Add a greeting', {}),
      executionMode: 'inline',
      settings,
      agent: null,
    },
    executionModeLabel: 'inline; parallel 2',
    lanes: 2,
    plan: parsed.plan,
    planVersion: 2,
    problem: 'Add a greeting',
    environment: null,
    milestones: initialMilestones('greet', parsed.plan),
    round: 1,
    hub: { pending: [], answered: [] },
    log: ['2026-12-02T00:00:00.000Z Phase: implementation'],
    usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 },
  };
}

describe('saga state migrations', () => {
  test('a version 1 state migrates to the current version with the defaults of the settings it lacked', async () => {
    const state = await currentState();
    const v1 = asVersion1(state);
    expect(v1.version).toBeUndefined();
    const migrated = migrateSagaState(v1);
    expect(migrated.version).toBe(SAGA_STATE_VERSION);
    expect(migrated.ctx.settings.heartbeatTimeoutMs).toBe(30_000);
    expect(migrated.ctx.settings.handoff).toEqual({
      maxFiles: 2000,
      maxFileBytes: 5 * 1024 * 1024,
      skipHooks: true, // hooks run only with handoff.run_hooks
    });
    expect(migrated.ctx.settings.passEnv).toEqual([]);
    expect(migrated.ctx.settings.budget.onExhausted).toBe('finish');
    expect(migrated.planVersion).toBeNull();
    // Everything else is carried as it was.
    expect({ ...migrated, planVersion: 2, ctx: { ...migrated.ctx, settings: null } }).toEqual({
      ...state,
      ctx: { ...state.ctx, settings: null },
    });
  });

  test('a current state passes unchanged', async () => {
    const state = await currentState();
    expect(migrateSagaState(structuredClone(state))).toEqual(state);
  });

  test('when the host last had no chat is carried; a state written before it knew that passes without it', async () => {
    const state = await currentState();
    expect(migrateSagaState({ ...state, noChatSince: 1_764_633_600_000 }).noChatSince).toBe(
      1_764_633_600_000,
    );
    expect(migrateSagaState(structuredClone(state)).noChatSince).toBeUndefined();
  });

  test('a state from newer code is refused, naming both versions', async () => {
    const state = { ...(await currentState()), version: SAGA_STATE_VERSION + 1 };
    expect(() => migrateSagaState(state)).toThrow(
      `saga state: version ${SAGA_STATE_VERSION + 1} was written by newer code (this code knows up to ${SAGA_STATE_VERSION}); upgrade saga`,
    );
  });

  test.each([
    ['not an object', 'plan', 'saga state: expected an object'],
    ['a bad version', { version: 'two' }, 'saga state: version must be a whole number from 1, got "two"'],
  ])('%s is refused', (_what, raw, message) => {
    expect(() => migrateSagaState(raw)).toThrow(message);
  });

  test('a broken field is named with the path to it', async () => {
    const state = await currentState();
    const broken = { ...state, lanes: 'two', milestones: [{ ...state.milestones[0], status: 'lost' }] };
    expect(() => migrateSagaState(broken)).toThrow(/^saga state \(version 2\): .*lanes: Expected number/);
    expect(() => migrateSagaState(broken)).toThrow(/milestones\.0\.status: Invalid enum value/);
  });
});
