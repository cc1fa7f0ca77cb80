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
import { WORKPAD_MARKER, type TrackerPhase } from '../../domain/tracker/workpad';
import type { Tracker } from './port';
import { asTrackerActivity } from './tracker-failure';
import { createTracker } from './trackers';

/** The workpad edited by id, else the one found by its marker, else created: one per issue however retried. */
async function writeWorkpadOn(
  tracker: Tracker,
  input: { ref: TrackerRef; body: string; commentId: string | null },
): Promise<{ commentId: string }> {
  // The marker is always in the body, so a later write (or a retry after a lost answer) finds it.
  const body = input.body.includes(WORKPAD_MARKER) ? input.body : `${WORKPAD_MARKER}\n${input.body}`;
  const commentId = input.commentId ?? (await tracker.findComment(input.ref, WORKPAD_MARKER));
  if (commentId !== null) {
    await tracker.editComment(input.ref, commentId, body);
    return { commentId };
  }
  return { commentId: await tracker.createComment(input.ref, body) };
}

/** A comment posted, unless one holding `marker` is already there (a retried activity). */
async function postOnce(
  tracker: Tracker,
  input: { ref: TrackerRef; body: string; marker: string | null },
): Promise<{ commentId: string }> {
  const { marker } = input;
  const body = marker === null || input.body.includes(marker) ? input.body : `${marker}\n${input.body}`;
  const existing = marker === null ? null : await tracker.findComment(input.ref, marker);
  return { commentId: existing ?? (await tracker.createComment(input.ref, body)) };
}

/** `trackerFor`: the adapter for a connection (tests hand in one reading another environment). */
export function createTrackerActivities(
  trackerFor: (connection: TrackerConnection) => Tracker = (connection) => createTracker(connection),
) {
  return {
    /** The issue, its text made safe and capped by the caller (domain/tracker intakeSource). */
    async readTrackerIssue(input: { tracker: TrackerConnection; ref: TrackerRef }): Promise<TrackerIssue> {
      return asTrackerActivity('readTrackerIssue', () => trackerFor(input.tracker).issue(input.ref));
    },
    /** Open issues in `scope` labelled `label`, oldest first. */
    async listLabelledIssues(input: {
      tracker: TrackerConnection;
      scope: TrackerScope;
      label: string;
    }): Promise<TrackerRef[]> {
      return asTrackerActivity('listLabelledIssues', () =>
        trackerFor(input.tracker).labelledIssues(input.scope, input.label),
      );
    },
    /**
     * The workpad written: edited when `commentId` is known, else found by WORKPAD_MARKER before one is
     * created (a retried or replayed write never makes a second workpad). Returns the comment's id.
     */
    async writeWorkpad(input: {
      tracker: TrackerConnection;
      ref: TrackerRef;
      body: string;
      commentId: string | null;
    }): Promise<{ commentId: string }> {
      return asTrackerActivity('writeWorkpad', () => writeWorkpadOn(trackerFor(input.tracker), input));
    },
    /** The label `saga:<phase>` on, the other `saga:` labels off (Linear: its state moved too). */
    async setIssuePhase(input: {
      tracker: TrackerConnection;
      ref: TrackerRef;
      phase: TrackerPhase;
    }): Promise<void> {
      return asTrackerActivity('setIssuePhase', () =>
        trackerFor(input.tracker).setPhase(input.ref, input.phase),
      );
    },
    /**
     * A comment (the saga's questions, or a note to a reply): `marker`, when given, is a hidden line the
     * body holds; a comment with it already there is not posted twice (a retried activity).
     */
    async postIssueComment(input: {
      tracker: TrackerConnection;
      ref: TrackerRef;
      body: string;
      marker: string | null;
    }): Promise<{ commentId: string }> {
      return asTrackerActivity('postIssueComment', () => postOnce(trackerFor(input.tracker), input));
    },
    /** Comments after `afterCommentId` (all when null), oldest first, with their authors' write access. */
    async readIssueReplies(input: {
      tracker: TrackerConnection;
      ref: TrackerRef;
      afterCommentId: string | null;
    }): Promise<IssueReply[]> {
      return asTrackerActivity('readIssueReplies', () =>
        trackerFor(input.tracker).commentsAfter(input.ref, input.afterCommentId),
      );
    },
  };
}

export type TrackerActivities = ReturnType<typeof createTrackerActivities>;
