/**
 * The tracker activities (docs/PROCEDURE.md §14): reading an issue, the watch's poll, and the write-back
 * (workpad, phase label, questions, replies). Each builds its adapter from the connection at the moment of
 * the call (the token is read from the worker's environment then). A 429 or 5xx is retried by Temporal after
 * the wait the tracker asked for; the write-back's proxies retry without a limit, so a tracker that is down
 * delays the write-back and never fails the saga.
 *
 * The names and shapes below are the contract the workflows use (activity names are kept in histories).
 */
import type { TrackerIssue, IssueReply, TrackerConnection } from '../../domain/tracker/issue';
import type { TrackerRef, TrackerScope } from '../../domain/tracker/tracker-ref';
import type { TrackerPhase } from '../../domain/tracker/workpad';

const notYet = (): never => {
  throw new Error('tracker activities: not implemented yet');
};

export function createTrackerActivities() {
  return {
    /** The issue, its text made safe and capped by the caller (domain/tracker intakeSource). */
    async readTrackerIssue(_input: { tracker: TrackerConnection; ref: TrackerRef }): Promise<TrackerIssue> {
      return notYet();
    },
    /** Open issues in `scope` labelled `label`, oldest first. */
    async listLabelledIssues(_input: {
      tracker: TrackerConnection;
      scope: TrackerScope;
      label: string;
    }): Promise<TrackerRef[]> {
      return notYet();
    },
    /**
     * The workpad written: edited when `commentId` is known, else found by WORKPAD_MARKER before one is
     * created (a retried or replayed write never makes a second workpad). Returns the comment's id.
     */
    async writeWorkpad(_input: {
      tracker: TrackerConnection;
      ref: TrackerRef;
      body: string;
      commentId: string | null;
    }): Promise<{ commentId: string }> {
      return notYet();
    },
    /** The label `saga:<phase>` on, the other `saga:` labels off (Linear: its state moved too). */
    async setIssuePhase(_input: {
      tracker: TrackerConnection;
      ref: TrackerRef;
      phase: TrackerPhase;
    }): Promise<void> {
      return notYet();
    },
    /**
     * A comment (the saga's questions, or a note to a reply): `marker`, when given, is a hidden line the
     * body holds; a comment with it already there is not posted twice (a retried activity).
     */
    async postIssueComment(_input: {
      tracker: TrackerConnection;
      ref: TrackerRef;
      body: string;
      marker: string | null;
    }): Promise<{ commentId: string }> {
      return notYet();
    },
    /** Comments after `afterCommentId` (all when null), oldest first, with their authors' write access. */
    async readIssueReplies(_input: {
      tracker: TrackerConnection;
      ref: TrackerRef;
      afterCommentId: string | null;
    }): Promise<IssueReply[]> {
      return notYet();
    },
  };
}

export type TrackerActivities = ReturnType<typeof createTrackerActivities>;
