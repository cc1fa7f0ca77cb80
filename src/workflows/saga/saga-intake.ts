/**
 * Intake and planning (docs/PROCEDURE.md §1, §2) as the saga runs them: the name is confirmed before
 * anything is created on disk, then the run settings and execution modes are fixed, the saga directory is
 * made, and the planning phase runs as a child. Returns the approved plan with its context (null when
 * the user cancelled or did not approve) and what the planner runs spent.
 */
import { executeChild, patched, workflowInfo } from '@temporalio/workflow';
import type { Environment } from '../../domain/planning/environment';
import { announceModes } from '../../domain/request/mode-resolution';
import { resolveRunModes, type RunModes } from '../../domain/request/run-modes';
import { confirmNamePrompt } from '../../domain/request/intake';
import type { CorrectableDecision } from '../../domain/planning/memory';
import { phaseWorkflowId } from '../../domain/contract/naming';
import type { Plan } from '../../domain/plan';
import type { SagaContext, SagaInput } from '../../domain/saga/saga-input';
import { SagaName } from '../../domain/contract/search-attributes';
import type { Answer, InteractionRequest, ProgressEvent, Usage } from '../../domain/contract/state';
import { noUsage } from '../../domain/agents/usage';
import { quickActivities } from '../activity-proxies';
import { planningWorkflow } from '../planning/planning';
import { CONFIRM_NAME_CHOICE } from '../../domain/contract/answer-choices';
import { PATCHES } from '../patches';

/** The first question of every saga; open before the update handler exists, so an early answer finds it. */
export const confirmNameRequest = (input: SagaInput): InteractionRequest => ({
  id: 'confirm-name',
  kind: 'confirm-name',
  // The intake restatement and unknowns, derived from the input alone: no I/O first.
  prompt: confirmNamePrompt(input),
  options: [CONFIRM_NAME_CHOICE.confirm, CONFIRM_NAME_CHOICE.cancel],
  recommended: 0,
});

export interface IntakeHooks {
  ask: (request: InteractionRequest) => Promise<Answer>;
  log: (line: string) => void;
  /** The modes are resolved (the status shows them from now on). */
  modesResolved: (modes: { lanes: number; executionModeLabel: string }) => void;
  /** The saga directory exists: PROGRESS.md may be written. */
  sagaDirReady: () => void;
  /** Progress a finished phase returned with its result (applied in order). */
  progress: (events: ProgressEvent[]) => void;
  /** The run settings are fixed (a saga from an issue starts its issue sync). */
  settingsLoaded?: (settings: SagaContext['settings']) => Promise<void>;
}

export interface PlannedSaga {
  ctx: SagaContext;
  plan: Plan;
  problem: string;
  /** Null in a run carried over from one that had none. */
  environment: Environment | null;
  /** Autonomous decisions the user may correct at acceptance (D1, D2, ...); absent when there are none. */
  decisions?: CorrectableDecision[];
}

export async function intakeAndPlan(
  input: SagaInput,
  hooks: IntakeHooks,
): Promise<{ planned: PlannedSaga | null; usage: Usage }> {
  const cancelled = { planned: null, usage: noUsage() };
  const confirm = await hooks.ask(confirmNameRequest(input));
  if (confirm.choice === CONFIRM_NAME_CHOICE.cancel) return cancelled;

  const quick = quickActivities(input.hostQueue);
  const settings = await quick.loadRunSettings({
    repo: input.repo,
    sagaHome: input.sagaHome,
    ...(input.configFile ? { configFile: input.configFile } : {}),
    ...(input.trustRepoConfig ? { trustRepoConfig: true } : {}),
    ...(input.deliver ? { deliver: true } : {}),
    ...(input.source ? { intake: input.source.ref } : {}),
    ...(input.budgetUsd !== undefined ? { sagaUsd: input.budgetUsd } : {}),
  });
  await hooks.settingsLoaded?.(settings);
  const agentName = input.agent ?? settings.defaultAgent;
  const anyProfile = patched(PATCHES.parallelAnyProfile);
  const modes = resolveRunModes(
    input.flags,
    { subagentDispatch: settings.subagentDispatch[agentName] ?? anyProfile, profileName: agentName },
    anyProfile,
  );
  hooks.modesResolved({ lanes: modes.parallel.lanes, executionModeLabel: modes.label });
  await createSagaDir(input, modes, hooks);
  if (modes.mode.degraded && (await acknowledgeDegraded(modes, hooks)) === 'abort') return cancelled;
  return plan(input, sagaContext(input, settings, modes), hooks);
}

/** Flags and modes are persisted before any artifact work. */
async function createSagaDir(input: SagaInput, modes: RunModes, hooks: IntakeHooks): Promise<void> {
  await quickActivities(input.hostQueue).initSagaDir({
    sagaDir: input.sagaDir,
    name: input.name,
    flags: input.flags,
    executionMode: modes.mode.manifestValue,
    parallelMode: modes.parallel.manifestValue,
    degradations: modes.degradations,
  });
  hooks.sagaDirReady();
  hooks.log(announceModes(input.flags, { product: 'Saga', workflow: 'saga' }).split('\n').join(' · '));
  for (const note of modes.notes) hooks.log(note);
}

/** An exception checkpoint: degraded quality must be acknowledged, even in autonomous mode. */
async function acknowledgeDegraded(modes: RunModes, hooks: IntakeHooks): Promise<string> {
  const ack = await hooks.ask({
    id: 'subagents-unavailable',
    kind: 'checkpoint',
    prompt: modes.mode.announcement!,
    options: ['continue inline', 'abort'],
    recommended: 0,
  });
  return ack.choice;
}

function sagaContext(input: SagaInput, settings: SagaContext['settings'], modes: RunModes): SagaContext {
  return {
    name: input.name,
    sagaWorkflowId: workflowInfo().workflowId,
    repo: input.repo,
    base: input.base,
    goal: input.goal,
    sagaDir: input.sagaDir,
    worktreeRoot: input.worktreeRoot,
    hostQueue: input.hostQueue,
    flags: input.flags,
    executionMode: modes.mode.mode,
    settings,
    agent: input.agent,
    ...(input.source ? { source: input.source } : {}),
  };
}

/** The planning phase as a child; the approved plan with its context (null when not approved). */
async function plan(
  input: SagaInput,
  ctx: SagaContext,
  hooks: IntakeHooks,
): Promise<{ planned: PlannedSaga | null; usage: Usage }> {
  const planning = await executeChild(planningWorkflow, {
    workflowId: phaseWorkflowId(input.name, 'planning'),
    staticSummary: `Planning of saga ${input.name}`,
    typedSearchAttributes: [{ key: SagaName, value: input.name }],
    args: [{ ctx, plan: input.plan }],
  });
  hooks.progress(planning.progress ?? []);
  // A raise answered during planning holds for the rest of the saga.
  if (planning.sagaBudgetUsd !== undefined)
    ctx = {
      ...ctx,
      settings: { ...ctx.settings, budget: { ...ctx.settings.budget, sagaUsd: planning.sagaBudgetUsd } },
    };
  const usage = planning.usage ?? noUsage();
  if (!planning.approved || !planning.plan) return { planned: null, usage };
  const { plan, problem, environment, decisions } = planning;
  return { planned: { ctx, plan, problem, environment, ...(decisions ? { decisions } : {}) }, usage };
}
