/**
 * The tracker port: what intake from an issue needs from GitHub, Gitea/Forgejo or Linear, one small
 * interface with an adapter per tracker. Adapters do HTTP only. The
 * token is read from the environment variable the connection names at the moment of a call, sent in an
 * Authorization header only, and never appears in an error, a log, a URL or a return value. A 429 or 5xx
 * is a retryable failure that says how long the tracker asked to wait (Retry-After); every call spends
 * from the token's budget, so a saga never hammers a tracker.
 */
import type { TrackerScope, TrackerRef } from '../../domain/tracker/tracker-ref';
import type { IssueReply, TrackerConnection, TrackerIssue } from '../../domain/tracker/issue';
import type { TrackerPhase } from '../../domain/tracker/workpad';

export interface Tracker {
  readonly connection: TrackerConnection;
  /** The issue with its comments (oldest first) and related issues; raw text (the caller makes it safe). */
  issue(ref: TrackerRef): Promise<TrackerIssue>;
  /** Open issues in `scope` that carry `label`, oldest first. */
  labelledIssues(scope: TrackerScope, label: string): Promise<TrackerRef[]>;
  /** The id of the first comment whose body holds `marker` (the workpad), or null. */
  findComment(ref: TrackerRef, marker: string): Promise<string | null>;
  createComment(ref: TrackerRef, body: string): Promise<string>;
  editComment(ref: TrackerRef, commentId: string, body: string): Promise<void>;
  /**
   * Comments after `afterCommentId` (all when null), oldest first, each with whether its author may write
   * to the repository (Linear: is a member of the team). The saga's own comments are included: callers skip
   * them by the marker they wrote.
   */
  commentsAfter(ref: TrackerRef, afterCommentId: string | null): Promise<IssueReply[]>;
  /**
   * The issue shows `phase`: label `saga:<phase>` added (created in the repository/team when missing) and
   * the other `saga:` labels removed; Linear also moves the issue's state (started → in review → done)
   * where the team's workflow has such a state.
   */
  setPhase(ref: TrackerRef, phase: TrackerPhase): Promise<void>;
  /** The token's user (for `saga doctor` and to skip the saga's own comments). */
  whoAmI(): Promise<{ login: string }>;
}
