/**
 * The worker fleet's state while the implementation workflow runs: milestone and task states, what each
 * task's next delegation carries (retained context, a branch move, a spec adjustment), the blocked streaks,
 * the events the fleet loop waits for, and the live progress the `progress` query reads. Workflow state
 * (deterministic, no I/O).
 */
import { addUsage, noUsage } from '../../domain/agents/usage';
import { withRunTimes, type TaskReport } from '../../domain/fleet/fleet';
import type { UnrunnableCheck } from '../../domain/fleet/unrunnable-checks';
import { addedMilestones, resumedMilestones } from '../../domain/fleet/fleet-run';
import type { Plan } from '../../domain/plan';
import { compactMilestone, recordedMilestoneIds } from '../../domain/saga/milestone-records';
import { applyLiveProgress, type LiveProgress } from '../../domain/saga/phase-progress';
import type { Answer, MilestoneState, ProgressEvent, TaskState, Usage } from '../../domain/contract/state';
import type { TaskInput } from '../task/task';

/** What wakes the fleet loop: a task child ended, or the user answered a question it asked. */
export type FleetEvent =
  | { type: 'done'; ref: string; report: TaskReport }
  | { type: 'failed'; ref: string; error: string }
  | { type: 'escalation'; ref: string; answer: Answer }
  | { type: 'spec-gap'; ref: string; gap: string; answer: Answer }
  | { type: 'unrunnable'; ref: string; checks: UnrunnableCheck[]; answers: Answer[] }
  | { type: 'budget'; answer: Answer };

/** The fleet's state as the implementation workflow carries it over continue-as-new. */
export interface CarriedFleet {
  milestones: MilestoneState[];
  usage: Usage;
  /** This phase's log lines so far, newest first. */
  log?: string[];
}

export class FleetState {
  readonly milestones: MilestoneState[];
  readonly states = new Map<string, TaskState>();
  /** Integrated milestones whose task states are in their record file, not here (milestone-records.ts). */
  readonly recorded: Set<number>;
  /** What finished work has spent. */
  usage: Usage;
  /** Read by the `progress` query: a signal to the saga per change cost its history four events each. */
  live: LiveProgress;
  /** Context for a task's next delegation: failure output files and notes. */
  readonly retained = new Map<string, TaskInput['retained']>();
  /** Tasks to redo on top of the integrated state: their branch is moved there (old tip archived). */
  readonly rebaseOnto = new Map<string, string>();
  /** Blocked outcomes in a row: a re-delegation, one with the spec adjusted, then the user decides. */
  readonly blockedStreak = new Map<string, number>();
  /** Tasks whose next delegation adjusts the spec first, and those whose latest delegation did. */
  readonly adjustSpecOf = new Map<string, NonNullable<TaskInput['adjustSpec']>>();
  private readonly adjustedLast = new Set<string>();
  readonly events: FleetEvent[] = [];
  /** Running task children's outcomes, awaited when the fleet stops. */
  readonly inFlight = new Set<Promise<unknown>>();
  private readonly added: MilestoneState[];

  constructor(sagaName: string, plan: Plan, carried: CarriedFleet | undefined) {
    const known = resumedMilestones(carried?.milestones ?? []);
    this.added = addedMilestones(sagaName, plan, known);
    this.milestones = [...known, ...this.added];
    this.recorded = recordedMilestoneIds(known);
    for (const m of this.milestones) for (const t of m.tasks) this.states.set(t.id, t);
    this.usage = carried?.usage ?? noUsage();
    // A copy: the fleet changes its own task objects in place.
    this.live = {
      milestones: JSON.parse(JSON.stringify(known)) as MilestoneState[],
      usage: this.usage,
      log: carried?.log ?? [],
    };
  }

  post(event: ProgressEvent): void {
    this.live = applyLiveProgress(this.live, event, new Date().toISOString());
  }

  /** The milestones the plan added since the carried state, for the live view. */
  announceAdded(): void {
    if (this.added.length)
      this.post({
        type: 'milestones',
        milestones: JSON.parse(JSON.stringify(this.added)) as MilestoneState[],
      });
  }

  log(line: string): void {
    this.post({ type: 'log', line });
  }

  update(task: TaskState, patch: Partial<TaskState>): void {
    Object.assign(task, withRunTimes(task, patch, new Date().toISOString()));
    this.post({ type: 'task', task: { ...task } });
  }

  task(ref: string): TaskState {
    return this.states.get(ref)!;
  }

  milestone(id: number): MilestoneState {
    return this.milestones.find((m) => m.id === id)!;
  }

  setMilestone(m: MilestoneState, status: MilestoneState['status']): void {
    m.status = status;
    this.post({ type: 'milestone', id: m.id, status, integrationCommit: m.integrationCommit });
  }

  /** One event for the milestone: the view marks its passed tasks integrated itself. */
  integrated(m: MilestoneState, head: string): void {
    m.integrationCommit = head;
    for (const t of m.tasks) if (t.status === 'passed') t.status = 'integrated';
    this.setMilestone(m, 'integrated');
  }

  /**
   * The integrated milestone's task states are in its record file now: the carried state, the live view
   * and the saga's status keep only its line and the tasks that did not land.
   */
  compact(m: MilestoneState): void {
    for (const t of m.tasks) if (t.status === 'integrated') this.states.delete(t.id);
    Object.assign(m, compactMilestone(m));
    this.recorded.add(m.id);
    this.live = {
      ...this.live,
      milestones: this.live.milestones.map((x) => (x.id === m.id ? compactMilestone(x) : x)),
    };
  }

  /** Spend of finished work (Fleet.spend tells the budget). */
  addSpend(spent: Usage | null | undefined): void {
    this.usage = addUsage(this.usage, spent);
  }

  /** What the task's next delegation takes with it; each is used once. */
  takeDelegation(ref: string): { rebase?: string; adjustSpec?: NonNullable<TaskInput['adjustSpec']> } {
    const rebase = this.rebaseOnto.get(ref);
    this.rebaseOnto.delete(ref);
    const adjustSpec = this.adjustSpecOf.get(ref);
    this.adjustSpecOf.delete(ref);
    if (adjustSpec) this.adjustedLast.add(ref);
    else this.adjustedLast.delete(ref);
    return { rebase, adjustSpec };
  }

  /** The task's latest delegation ran on a spec the planner had adjusted. */
  adjustedLastTime(ref: string): boolean {
    return this.adjustedLast.has(ref);
  }

  /** The task is run again with this context (`rebaseOnto`: on top of that integrated commit). */
  redo(
    task: TaskState,
    retained: TaskInput['retained'],
    patch: Partial<TaskState> = {},
    rebaseOnto?: string,
  ): void {
    this.retained.set(task.id, retained);
    if (rebaseOnto) this.rebaseOnto.set(task.id, rebaseOnto);
    this.update(task, { status: 'pending', ...patch });
  }
}
