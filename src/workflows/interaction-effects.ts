/**
 * What happens around an interaction besides waiting for it: chat notifications when it opens (and durable
 * reminders while it stays open), the Slack message update and a decisions.md entry when it is answered.
 * All of it runs in the background: a chat outage or a failed write never blocks or fails the saga.
 */
import { condition, log, patched, proxyActivities } from '@temporalio/workflow';
import type { SagaActivities } from '../activities';
import type { Answer, Interaction } from '../domain/state';

export interface InteractionEffectsOptions {
  saga: string;
  sagaDir: string;
  hostQueue: string;
  uiUrl: () => string;
  pending: () => Interaction[];
  sagaDirReady: () => boolean;
}

export class InteractionEffects {
  /** Histories recorded before notifications existed replay without them. */
  private readonly enabled = patched('interaction-effects');
  private readonly activities;
  /** Null until the worker tells how often to remind (null again if it has nowhere to notify). */
  private remindAfterMs: number | null = null;
  private readonly lastNotified = new Map<string, { at: number; reminder: number }>();
  private readonly unrecorded: Answer[] = [];
  private changes = 0;
  /** Background activities not yet settled: the saga waits for them before it completes. */
  private inFlight = 0;

  constructor(private readonly options: InteractionEffectsOptions) {
    this.activities = proxyActivities<SagaActivities>({
      taskQueue: options.hostQueue,
      startToCloseTimeout: '1m',
      retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 6 },
    });
  }

  opened(interaction: Interaction): void {
    if (!this.enabled) return;
    this.lastNotified.set(interaction.id, { at: Date.now(), reminder: 0 });
    this.notify(interaction, 0);
    this.changes++;
  }

  answered(answer: Answer): void {
    if (!this.enabled) return;
    this.lastNotified.delete(answer.interactionId);
    this.unrecorded.push(answer);
    this.changes++;
    const { user, choice, text } = answer;
    this.background(
      `update chat messages of ${answer.interactionId}`,
      this.activities.notifyAnswered({
        saga: this.options.saga,
        interactionId: answer.interactionId,
        answer: { user, choice, ...(text ? { text } : {}) },
        uiUrl: this.options.uiUrl(),
      }),
    );
  }

  /** The background loops; they run until the saga ends. */
  async run(): Promise<void> {
    if (!this.enabled) return;
    await Promise.all([this.remindLoop(), this.recordLoop()]);
  }

  private notify(interaction: Interaction, reminder: number): void {
    const { id, kind, prompt, options, recommended } = interaction;
    const sent = this.activities
      .notifyInteraction({
        saga: this.options.saga,
        interaction: { id, kind, prompt, options, recommended },
        uiUrl: this.options.uiUrl(),
        reminder,
      })
      .then(({ remindAfterMs }) => {
        if (remindAfterMs !== this.remindAfterMs) {
          this.remindAfterMs = remindAfterMs;
          this.changes++;
        }
      });
    this.background(`notify chat of ${id}${reminder ? ` (reminder ${reminder})` : ''}`, sent);
  }

  private background(what: string, work: Promise<unknown>): void {
    this.inFlight++;
    work
      .catch((error: unknown) => log.warn(`Could not ${what}; the saga goes on`, { error: String(error) }))
      .finally(() => this.inFlight--);
  }

  /**
   * Resolves when no notification or decisions.md write is in flight (bounded wait). Completing the
   * workflow while one finishes would make the server reject that completion (UnhandledCommand) and
   * abort an update delivered with it, e.g. the answer that ended the saga.
   */
  async settled(timeoutMs = 30_000): Promise<void> {
    if (!this.enabled) return;
    await condition(
      () => this.inFlight === 0 && (this.unrecorded.length === 0 || !this.options.sagaDirReady()),
      timeoutMs,
    );
  }

  /** A durable timer per wait: an interaction open longer than remindAfterMs is notified again. */
  private async remindLoop(): Promise<void> {
    for (;;) {
      await condition(() => this.remindAfterMs !== null && this.options.pending().length > 0);
      const every = this.remindAfterMs!;
      const now = Date.now();
      let next = Infinity;
      for (const interaction of this.options.pending()) {
        // Pending interactions carried over continue-as-new start their clock now.
        const last = this.lastNotified.get(interaction.id) ?? { at: now, reminder: 0 };
        if (last.at + every <= now) {
          this.lastNotified.set(interaction.id, { at: now, reminder: last.reminder + 1 });
          this.notify(interaction, last.reminder + 1);
          next = Math.min(next, now + every);
        } else {
          this.lastNotified.set(interaction.id, last);
          next = Math.min(next, last.at + every);
        }
      }
      const seen = this.changes;
      await condition(() => this.changes !== seen, Math.max(next - now, 1));
    }
  }

  /** decisions.md gets one entry per answer, once the saga directory exists (the name is confirmed first). */
  private async recordLoop(): Promise<void> {
    for (;;) {
      await condition(() => this.unrecorded.length > 0 && this.options.sagaDirReady());
      const answer = this.unrecorded[0]!;
      await this.activities
        .prependDecision({
          sagaDir: this.options.sagaDir,
          entry: {
            at: answer.answeredAt,
            title: `${answer.user} answered ${answer.interactionId}: ${answer.choice}`,
            lines: [
              `- Answered by ${answer.user}; recorded in the saga's workflow history (respond update).`,
              ...(answer.text ? [`- Note: ${answer.text}`] : []),
            ],
          },
        })
        .catch((error: unknown) =>
          log.warn('Could not record an answer in decisions.md', { error: String(error) }),
        );
      this.unrecorded.shift();
    }
  }
}
