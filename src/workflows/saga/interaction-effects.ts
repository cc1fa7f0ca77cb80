/**
 * What happens around an interaction besides waiting for it: chat notifications when it opens (and durable
 * reminders while it stays open, each waiting twice as long as the one before, at most `maxReminders`), and
 * the chat message's update when it is answered (only when chat was told of it: no activity otherwise).
 * All of it runs in the background: a chat outage never blocks or fails the saga. A host without chat is
 * asked again only after CHAT_RECHECK_MS (its next runs too), not once per interaction. (decisions.md gets its
 * entry per answer from the saga's projector, outside this history.)
 */
import { condition, log, patched, proxyActivities } from '@temporalio/workflow';
import type { SagaActivities } from '../../activities';
import type { Answer, Interaction } from '../../domain/contract/state';
import { PATCHES } from '../patches';

export interface InteractionEffectsOptions {
  saga: string;
  sagaDir: string;
  hostQueue: string;
  uiUrl: () => string;
  pending: () => Interaction[];
  /** Carried from the saga's previous run: when the host last said it has nowhere to notify. */
  noChatSince?: number | null;
}

/** Reminders per interaction when the worker does not say (a result recorded before the limit existed). */
const DEFAULT_MAX_REMINDERS = 5;
/** The wait before reminder n is remindAfterMs × 2^(n-1); it stops doubling after this many times. */
const MAX_DOUBLINGS = 10;
/**
 * After the worker said it has nowhere to notify, interactions opened within this long are not sent to it
 * (an activity each, six events of the saga's history); chat set up later (a worker restarted with it) is
 * told of the interactions opened after that.
 */
export const CHAT_RECHECK_MS = 10 * 60_000;

export class InteractionEffects {
  private readonly activities;
  /** Null until the worker tells how often to remind (null again if it has nowhere to notify). */
  private remindAfterMs: number | null = null;
  private maxReminders = DEFAULT_MAX_REMINDERS;
  private readonly lastNotified = new Map<string, { at: number; reminder: number }>();
  /** Whether chat was told of an interaction (false: nowhere to notify), per interaction of this run. */
  private readonly toldChat = new Map<string, Promise<boolean>>();
  /** When the worker last said it has nowhere to notify (null: it has, or it was not asked yet). */
  private noChatSince: number | null;
  private changes = 0;
  /** Background activities not yet settled: the saga waits for them before it completes. */
  private inFlight = 0;

  constructor(private readonly options: InteractionEffectsOptions) {
    this.noChatSince = options.noChatSince ?? null;
    this.activities = proxyActivities<SagaActivities>({
      taskQueue: options.hostQueue,
      startToCloseTimeout: '1m',
      retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 6 },
    });
  }

  /** What the saga's next run starts from (see InteractionEffectsOptions.noChatSince). */
  carried(): number | null {
    return this.noChatSince;
  }

  opened(interaction: Interaction): void {
    this.lastNotified.set(interaction.id, { at: Date.now(), reminder: 0 });
    if (this.noChatSince !== null && Date.now() - this.noChatSince < CHAT_RECHECK_MS)
      this.toldChat.set(interaction.id, Promise.resolve(false));
    else if (patched(PATCHES.quietAnsweredAtOnce)) this.notifyAfterTask(interaction);
    else void this.notify(interaction, 0);
    this.changes++;
  }

  /**
   * Chat hears of the question once the code running now has settled (the next unblocking of conditions):
   * one answered at once in the same workflow task (confirm-name of a saga `saga watch` started, whose
   * label confirmed it) was never a question to anyone, so no notice goes out nor its update.
   */
  private notifyAfterTask(interaction: Interaction): void {
    const { id } = interaction;
    const told = condition(() => true).then(() =>
      this.options.pending().some((i) => i.id === id) ? this.notify(interaction, 0) : false,
    );
    this.toldChat.set(id, told);
    this.background(`notify chat of ${id}`, told);
  }

  answered(answer: Answer): void {
    this.lastNotified.delete(answer.interactionId);
    this.changes++;
    const { user, choice, text } = answer;
    // Opened in an earlier run: assume chat was told.
    const told = this.toldChat.get(answer.interactionId) ?? Promise.resolve(true);
    this.background(
      `update chat messages of ${answer.interactionId}`,
      told.then(async (yes) => {
        if (yes)
          await this.activities.notifyAnswered({
            saga: this.options.saga,
            interactionId: answer.interactionId,
            answer: { user, choice, ...(text ? { text } : {}) },
            uiUrl: this.options.uiUrl(),
          });
      }),
    );
  }

  /** The reminder loop; it runs until the saga ends. */
  async run(): Promise<void> {
    await this.remindLoop();
  }

  /** Resolves to whether chat was told (an activity failing past its retries: assumed told). */
  private notify(interaction: Interaction, reminder: number): Promise<boolean> {
    const { id, kind, prompt, options, recommended } = interaction;
    const sent = this.activities
      .notifyInteraction({
        saga: this.options.saga,
        interaction: { id, kind, prompt, options, recommended },
        uiUrl: this.options.uiUrl(),
        reminder,
      })
      .then(({ remindAfterMs, maxReminders }) => {
        this.noChatSince = remindAfterMs === null ? Date.now() : null;
        if (remindAfterMs !== this.remindAfterMs) {
          this.remindAfterMs = remindAfterMs;
          this.changes++;
        }
        if (maxReminders !== undefined && maxReminders !== this.maxReminders) {
          this.maxReminders = maxReminders;
          this.changes++;
        }
        return remindAfterMs !== null;
      });
    const told = sent.catch(() => true);
    if (reminder === 0) this.toldChat.set(id, told);
    this.background(`notify chat of ${id}${reminder ? ` (reminder ${reminder})` : ''}`, sent);
    return told;
  }

  private background(what: string, work: Promise<unknown>): void {
    this.inFlight++;
    work
      .catch((error: unknown) => log.warn(`Could not ${what}; the saga goes on`, { error: String(error) }))
      .finally(() => this.inFlight--);
  }

  /**
   * Resolves when no notification is in flight (bounded wait). Completing the workflow while one finishes
   * would make the server reject that completion (UnhandledCommand) and abort an update delivered with it,
   * e.g. the answer that ended the saga.
   */
  async settled(timeoutMs = 30_000): Promise<void> {
    await condition(() => this.inFlight === 0, timeoutMs);
  }

  /**
   * A durable timer per wait: an interaction open longer than its current wait is notified again. The wait
   * doubles with each reminder and there are at most maxReminders, so an unanswered saga does not grow its
   * history without end.
   */
  private async remindLoop(): Promise<void> {
    for (;;) {
      await condition(() => this.remindAfterMs !== null && this.options.pending().length > 0);
      const every = this.remindAfterMs!;
      /** How long after reminder `sent` (0: the first notification) the next one is due; Infinity: none. */
      const waitAfter = (sent: number): number => {
        if (sent >= this.maxReminders) return Infinity;
        return every * 2 ** Math.min(sent, MAX_DOUBLINGS);
      };
      const now = Date.now();
      let next = Infinity;
      for (const interaction of this.options.pending()) {
        // Pending interactions carried over continue-as-new start their clock now.
        const last = this.lastNotified.get(interaction.id) ?? { at: now, reminder: 0 };
        const due = last.at + waitAfter(last.reminder);
        if (due <= now) {
          this.lastNotified.set(interaction.id, { at: now, reminder: last.reminder + 1 });
          void this.notify(interaction, last.reminder + 1);
          next = Math.min(next, now + waitAfter(last.reminder + 1));
        } else {
          this.lastNotified.set(interaction.id, last);
          next = Math.min(next, due);
        }
      }
      const seen = this.changes;
      // Every reminder sent: only a new interaction (or a changed setting) wakes the loop.
      if (next === Infinity) await condition(() => this.changes !== seen);
      else await condition(() => this.changes !== seen, Math.max(next - now, 1));
    }
  }
}
