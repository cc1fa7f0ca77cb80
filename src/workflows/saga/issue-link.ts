/**
 * A saga from an issue and its issue sync (docs/PROCEDURE.md §14): once the run settings are loaded the
 * saga starts the sync as a child it abandons (the sync outlives the saga's runs), then tells it, at phase
 * boundaries only, what the workpad shows, and with `intake.questions: issue` which questions are pending.
 * Signals go one at a time, in order (the latest list of questions is the one the sync keeps); one that
 * fails is logged and never fails the saga. A saga without an issue does nothing here.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  condition,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  startChild,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { Interaction } from '../../domain/contract/state';
import { SagaName } from '../../domain/contract/search-attributes';
import { issueQuestionsSignal, workpadSignal } from '../../domain/saga/messages';
import type { IntakeSettings, SagaInput } from '../../domain/saga/saga-input';
import { issueSyncWorkflowId } from '../../domain/tracker/issue-sync';
import type { WorkpadUpdate } from '../../domain/tracker/workpad';
import type { issueSyncWorkflow } from '../tracker/issue-sync';
import { CONFIRM_NAME_CHOICE } from '../../domain/contract/answer-choices';
import type { InteractionHub } from './interaction-hub';

/**
 * `input.confirmedBy` (`saga watch`: the label confirmed it): confirm-name answered at once, through the hub
 * so it is recorded like any answer, by whoever confirmed it.
 */
export function confirmedBefore(hub: InteractionHub, by: string): void {
  hub.respond({ interactionId: 'confirm-name', choice: CONFIRM_NAME_CHOICE.confirm, user: by });
}

export class IssueLink {
  /** The tracker and where questions go, once the sync runs (null: no issue, or not started yet). */
  private settings: IntakeSettings | null;
  private sending: Promise<void> = Promise.resolve();
  private inFlight = 0;

  /** `carried`: the intake settings of a run that continues a saga whose sync already runs. */
  constructor(
    private readonly input: SagaInput,
    carried: IntakeSettings | undefined,
    private readonly pending: () => Interaction[],
  ) {
    this.settings = input.source && carried ? carried : null;
  }

  get active(): boolean {
    return this.settings !== null;
  }

  /** After loadRunSettings: the sync started (already running is fine) and told the saga plans. */
  async start(settings: IntakeSettings | undefined, uiUrl: string): Promise<void> {
    const { input } = this;
    if (!input.source || !settings || this.settings) return;
    try {
      await startChild<typeof issueSyncWorkflow>('issueSyncWorkflow', {
        workflowId: issueSyncWorkflowId(input.name),
        args: [
          {
            sagaName: input.name,
            sagaWorkflowId: workflowInfo().workflowId,
            hostQueue: input.hostQueue,
            source: input.source,
            tracker: settings.tracker,
            questions: settings.questions,
          },
        ],
        // It writes the saga's end after the saga's last run: no run of the saga may take it down.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `Issue sync of saga ${input.name}`,
        typedSearchAttributes: [{ key: SagaName, value: input.name }],
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
        // No write-back then, but the saga goes on: the issue is where it came from, not what it needs.
        log.warn('Could not start the issue sync; the saga goes on', { error: String(error) });
        return;
      }
    }
    this.settings = settings;
    this.send({ phase: 'planning', sagaName: input.name, uiUrl: uiUrl || null });
    this.questionsChanged();
  }

  /** A phase boundary: what the workpad shows now. */
  send(update: WorkpadUpdate): void {
    if (this.settings) this.signal((sync) => sync.signal(workpadSignal, update));
  }

  /** The hub's pending list changed (`questions: issue`): the whole list, questions with options only. */
  questionsChanged(): void {
    if (this.settings?.questions !== 'issue') return;
    this.signal((sync) =>
      sync.signal(
        issueQuestionsSignal,
        this.pending().filter((i) => i.options.length > 0),
      ),
    );
  }

  /** Resolves when no signal is on its way (before the run ends or continues as new). */
  async settled(): Promise<void> {
    if (this.settings) await condition(() => this.inFlight === 0);
  }

  private signal(send: (sync: ReturnType<typeof getExternalWorkflowHandle>) => Promise<void>): void {
    const sync = getExternalWorkflowHandle(issueSyncWorkflowId(this.input.name));
    this.inFlight++;
    this.sending = this.sending
      .then(() => send(sync))
      .catch((error: unknown) =>
        log.warn('Could not tell the issue sync; the saga goes on', { error: String(error) }),
      )
      .finally(() => this.inFlight--);
  }
}
