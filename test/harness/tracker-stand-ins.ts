/**
 * A tracker kept in memory, behind the real tracker activities' names and shapes
 * (src/activities/tracker/tracker-activities.ts), for the time-skipping tests of the issue sync and the
 * watch (test/integration/workflows/tracker/). It keeps issues, their comments (with whether each author
 * may write), labels; the write-back finds its marker before it posts (as the real activities do). Every
 * call is recorded with the workflow time it was scheduled at. A scenario may make writes fail (retryable)
 * a number of times, slow them down, or answer the saga's questions comment with scripted replies.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { TrackerActivities } from '../../src/activities/tracker/tracker-activities';
import type { TrackerIssue } from '../../src/domain/tracker/issue';
import { trackerRefText, type TrackerRef } from '../../src/domain/tracker/tracker-ref';
import { WORKPAD_MARKER } from '../../src/domain/tracker/workpad';

type Name = keyof TrackerActivities;

export interface TrackerCall {
  name: Name;
  input: Record<string, unknown>;
  atMs: number;
  /** Whether this attempt failed (a scripted outage). */
  failed: boolean;
}

export interface StoredComment {
  id: string;
  author: string;
  body: string;
  canWrite: boolean;
}

export interface StoredIssue {
  ref: TrackerRef;
  title: string;
  body: string;
  labels: string[];
  open: boolean;
  comments: StoredComment[];
}

export interface TrackerScript {
  /** writeWorkpad and setIssuePhase fail (retryable, as a 503 does) this many times first. */
  failWrites?: number;
  /** writeWorkpad takes this long (real time), so updates arrive while a write is under way. */
  writeDelayMs?: number;
  /** Replies added right after the saga posts a questions comment (the first one only). */
  repliesToQuestions?: { author: string; body: string; canWrite: boolean }[];
  /** readTrackerIssue of these references fails non-retryably (as a 404 does). */
  missing?: string[];
}

export class MemoryTracker {
  readonly issues = new Map<string, StoredIssue>();
  readonly calls: TrackerCall[] = [];
  private nextId = 100;
  private failuresLeft: number;
  private repliedOnce = false;

  constructor(private readonly script: TrackerScript = {}) {
    this.failuresLeft = script.failWrites ?? 0;
  }

  addIssue(ref: TrackerRef, fields: Partial<Omit<StoredIssue, 'ref'>> = {}): StoredIssue {
    const issue: StoredIssue = {
      ref,
      title: `Issue ${ref.number}`,
      body: 'Do the thing.',
      labels: [],
      open: true,
      comments: [],
      ...fields,
    };
    this.issues.set(trackerRefText(ref), issue);
    return issue;
  }

  issue(ref: TrackerRef): StoredIssue {
    const found = this.issues.get(trackerRefText(ref));
    if (!found) throw ApplicationFailure.nonRetryable(`404: no issue ${trackerRefText(ref)}`, 'NotFound');
    return found;
  }

  comment(ref: TrackerRef, author: string, body: string, canWrite: boolean): StoredComment {
    const comment = { id: String(this.nextId++), author, body, canWrite };
    this.issue(ref).comments.push(comment);
    return comment;
  }

  /** The calls of one activity, their inputs, in order (failed attempts left out). */
  inputs<K extends Name>(name: K): Parameters<TrackerActivities[K]>[0][] {
    return this.calls
      .filter((c) => c.name === name && !c.failed)
      .map((c) => c.input as Parameters<TrackerActivities[K]>[0]);
  }

  private record(name: Name, input: object, failed = false): void {
    let atMs = 0;
    try {
      atMs = Context.current().info.currentAttemptScheduledTimestampMs;
    } catch {
      /* called outside an activity */
    }
    this.calls.push({ name, input: input as Record<string, unknown>, atMs, failed });
  }

  private outage(name: Name, input: object): void {
    if (this.failuresLeft <= 0) return;
    this.failuresLeft--;
    this.record(name, input, true);
    throw ApplicationFailure.retryable('503: the tracker is down', 'TrackerUnavailable');
  }

  private postOnce(ref: TrackerRef, body: string, marker: string | null): string {
    const found = marker ? this.issue(ref).comments.find((c) => c.body.includes(marker)) : undefined;
    return found?.id ?? this.comment(ref, 'saga-bot', body, true).id;
  }

  activities(): TrackerActivities {
    return {
      readTrackerIssue: async (input) => {
        this.record('readTrackerIssue', input);
        const text = trackerRefText(input.ref);
        if (this.script.missing?.includes(text))
          throw ApplicationFailure.nonRetryable(`404: no issue ${text}`, 'NotFound');
        const i = this.issue(input.ref);
        const issue: TrackerIssue = {
          ref: i.ref,
          url: `http://tracker.invalid/${text}`,
          title: i.title,
          body: i.body,
          labels: i.labels,
          state: i.open ? 'open' : 'closed',
          comments: i.comments.map((c) => ({
            id: c.id,
            author: c.author,
            body: c.body,
            at: '2026-01-01T00:00:00Z',
          })),
          related: [],
        };
        return issue;
      },
      listLabelledIssues: async (input) => {
        this.record('listLabelledIssues', input);
        return [...this.issues.values()]
          .filter((i) => i.open && i.labels.includes(input.label))
          .map((i) => i.ref);
      },
      writeWorkpad: async (input) => {
        this.outage('writeWorkpad', input);
        this.record('writeWorkpad', input);
        if (this.script.writeDelayMs) await new Promise((r) => setTimeout(r, this.script.writeDelayMs));
        const comments = this.issue(input.ref).comments;
        const existing =
          comments.find((c) => c.id === input.commentId) ??
          comments.find((c) => c.body.includes(WORKPAD_MARKER));
        if (existing) {
          existing.body = input.body;
          return { commentId: existing.id };
        }
        return { commentId: this.comment(input.ref, 'saga-bot', input.body, true).id };
      },
      setIssuePhase: async (input) => {
        this.outage('setIssuePhase', input);
        this.record('setIssuePhase', input);
        const issue = this.issue(input.ref);
        issue.labels = [...issue.labels.filter((l) => !l.startsWith('saga:')), `saga:${input.phase}`];
      },
      postIssueComment: async (input) => {
        this.record('postIssueComment', input);
        const commentId = this.postOnce(input.ref, input.body, input.marker);
        if (input.marker?.includes('saga:questions') && !this.repliedOnce) {
          this.repliedOnce = true;
          for (const r of this.script.repliesToQuestions ?? [])
            this.comment(input.ref, r.author, r.body, r.canWrite);
        }
        return { commentId };
      },
      readIssueReplies: async (input) => {
        this.record('readIssueReplies', input);
        const comments = this.issue(input.ref).comments;
        const after =
          input.afterCommentId === null ? -1 : comments.findIndex((c) => c.id === input.afterCommentId);
        return comments.slice(after + 1).map((c) => ({ ...c, at: '2026-01-01T00:00:00Z' }));
      },
    };
  }
}
