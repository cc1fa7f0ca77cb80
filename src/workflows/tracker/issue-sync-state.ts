/**
 * The issue sync's state and steps (its workflow, issue-sync.ts, lists the handlers): the workpad as the
 * saga last described it, whether the tracker shows it yet, the questions posted on the issue and the
 * replies read. One write is in flight at a time; updates that arrive meanwhile merge into the workpad and
 * the next write takes the latest. A tracker that is down delays this workflow only: the saga just signals.
 */
import { log } from '@temporalio/workflow';
import type { Interaction } from '../../domain/contract/state';
import {
  decideReply,
  emptyQuestionBook,
  newQuestions,
  noteComment,
  noteMarker,
  questionsComment,
  questionsMarker,
  type QuestionBook,
} from '../../domain/tracker/issue-replies';
import type { IssueSyncInput } from '../../domain/tracker/issue-sync';
import type { IssueReply } from '../../domain/tracker/issue';
import type { TrackerPhase, Workpad, WorkpadUpdate } from '../../domain/tracker/workpad';
import { emptyWorkpad, isFinalPhase, mergeWorkpad } from '../../domain/tracker/workpad-updates';
import { renderWorkpad } from '../../domain/tracker/workpad-text';
import { temporalActivities, trackerActivities } from '../activity-proxies';

/** Waits between reads of the replies while a question is pending: 15 s, 30 s, 1 min, then every 2 min. */
export const REPLY_POLL_MS = [15_000, 30_000, 60_000, 120_000] as const;

/** What a next run of the issue sync starts from (continue-as-new). */
export interface IssueSyncCarry {
  workpad: Workpad;
  dirty: boolean;
  commentId: string | null;
  phaseShown: TrackerPhase | null;
  book: QuestionBook;
  pending: Interaction[];
  lastSeen: string | null;
  pollStep: number;
}

export class IssueSync {
  workpad: Workpad;
  /** The workpad changed since the tracker last showed it. */
  dirty: boolean;
  commentId: string | null;
  /** The phase label the issue carries (null: none set by this saga yet). */
  phaseShown: TrackerPhase | null;
  book: QuestionBook;
  /** The saga's pending questions as last sent (with `questions: issue`). */
  pending: Interaction[];
  /** The last comment whose replies were read. */
  lastSeen: string | null;
  pollStep: number;
  /** When the replies are read next (workflow time). */
  nextPollAt = 0;
  /** The final update (done, cancelled) is on the issue. */
  ended = false;
  private readonly read;
  private readonly writeBack;
  private readonly temporal;

  constructor(
    readonly input: IssueSyncInput,
    carry?: IssueSyncCarry,
  ) {
    this.workpad = carry?.workpad ?? emptyWorkpad(input.sagaName);
    this.dirty = carry?.dirty ?? false;
    this.commentId = carry?.commentId ?? null;
    this.phaseShown = carry?.phaseShown ?? null;
    this.book = carry?.book ?? emptyQuestionBook();
    this.pending = carry?.pending ?? [];
    this.lastSeen = carry?.lastSeen ?? null;
    this.pollStep = carry?.pollStep ?? 0;
    if (this.pending.length) this.nextPollAt = Date.now();
    ({ read: this.read, writeBack: this.writeBack } = trackerActivities(input.hostQueue));
    this.temporal = temporalActivities(input.hostQueue);
  }

  /** The workpadSignal's handler: the update merged, written at the next step (after the end: ignored). */
  update(update: WorkpadUpdate): void {
    if (this.ended) return;
    this.workpad = mergeWorkpad(this.workpad, update);
    this.dirty = true;
  }

  /** The issueQuestionsSignal's handler: the whole pending list (questions on the CLI: not kept). */
  setQuestions(pending: Interaction[]): void {
    if (this.input.questions !== 'issue') return;
    this.pending = pending.filter((i) => i.options.length > 0);
  }

  hasUnposted(): boolean {
    return this.pending.some((i) => !this.book.posted.some((p) => p.interactionId === i.id));
  }

  /** The workpad and, when its phase changed, the label; the latest state wins. */
  async write(): Promise<void> {
    const { tracker, source } = this.input;
    const workpad = this.workpad;
    this.dirty = false;
    try {
      const { commentId } = await this.writeBack.writeWorkpad({
        tracker,
        ref: source.ref,
        body: renderWorkpad(workpad, source),
        commentId: this.commentId,
      });
      this.commentId = commentId;
      if (workpad.phase !== this.phaseShown) {
        await this.writeBack.setIssuePhase({ tracker, ref: source.ref, phase: workpad.phase });
        this.phaseShown = workpad.phase;
      }
    } catch (error) {
      // Retried without a limit, so only what the tracker refuses gets here (a lost permission): said in
      // the worker's log; the next update tries again.
      log.warn('The tracker refused the workpad', { error: String(error) });
    } finally {
      if (isFinalPhase(workpad.phase)) this.ended = true;
    }
  }

  /** The questions not on the issue yet, in one comment; replies are read from it on. */
  async postQuestions(): Promise<void> {
    const pending = this.pending;
    const { book, added } = newQuestions(this.book, pending);
    if (added.length === 0) return;
    // Kept as posted even when the tracker refuses the comment: asked once, never in a loop.
    this.book = book;
    const posted = await this.writeBack
      .postIssueComment({
        tracker: this.input.tracker,
        ref: this.input.source.ref,
        body: questionsComment(this.input.sagaName, added, pending),
        marker: questionsMarker(added),
      })
      .catch((error: unknown) => {
        log.warn('The tracker refused the questions comment', { error: String(error) });
        return null;
      });
    if (posted) this.lastSeen ??= posted.commentId;
    this.pollStep = 0;
    this.nextPollAt = Date.now() + REPLY_POLL_MS[0];
  }

  /** A question is pending and its replies are due to be read. */
  pollDue(): boolean {
    return this.pending.length > 0 && Date.now() >= this.nextPollAt;
  }

  /** Milliseconds until the next read of the replies (Infinity: nothing pending). */
  pollWaitMs(): number {
    return this.pending.length ? Math.max(this.nextPollAt - Date.now(), 1) : Infinity;
  }

  /** Each reply since the last one read, in order: commands of writers answered, others said ignored. */
  async readReplies(): Promise<void> {
    const { tracker, source } = this.input;
    const replies = await this.read.readIssueReplies({
      tracker,
      ref: source.ref,
      afterCommentId: this.lastSeen,
    });
    for (const reply of replies) {
      await this.handleReply(reply);
      this.lastSeen = reply.id;
    }
    this.lookedAfterFailure();
  }

  /** The next read of the replies, after the backoff's next wait. */
  lookedAfterFailure(): void {
    this.pollStep = Math.min(this.pollStep + 1, REPLY_POLL_MS.length - 1);
    this.nextPollAt = Date.now() + REPLY_POLL_MS[this.pollStep]!;
  }

  private async handleReply(reply: IssueReply): Promise<void> {
    const decision = decideReply(
      reply,
      this.book,
      this.pending.map((i) => i.id),
      this.input.tracker.kind,
    );
    if (decision.kind === 'skip') return;
    if (decision.kind === 'ignore') return this.note(reply.id, [decision.note]);
    const problems = [...decision.problems];
    for (const { alias, respond } of decision.answers) {
      const result = await this.temporal.answerFromIssue({
        sagaWorkflowId: this.input.sagaWorkflowId,
        response: respond,
      });
      if (result.ok) this.pending = this.pending.filter((i) => i.id !== respond.interactionId);
      else problems.push(`${alias}: ${result.error}`);
    }
    if (problems.length) await this.note(reply.id, problems);
  }

  private async note(commentId: string, lines: string[]): Promise<void> {
    await this.writeBack
      .postIssueComment({
        tracker: this.input.tracker,
        ref: this.input.source.ref,
        body: noteComment(commentId, lines),
        marker: noteMarker(commentId),
      })
      .catch((error: unknown) => log.warn('Could not post a note on the issue', { error: String(error) }));
  }

  carried(): IssueSyncCarry {
    const { workpad, dirty, commentId, phaseShown, book, pending, lastSeen, pollStep } = this;
    return { workpad, dirty, commentId, phaseShown, book, pending, lastSeen, pollStep };
  }
}
