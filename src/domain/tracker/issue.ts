/**
 * An issue as a tracker gives it, and what a saga keeps of it. Everything in it was written by whoever can
 * write on the tracker: untrusted text. It reaches a prompt only through `untrustedRequestText` (terminal
 * controls stripped, sizes capped, fenced and labelled as data), never as instructions.
 */
import { z } from 'zod';
import { INTAKE_QUESTIONS, TRACKER_KINDS } from '../config/intake-keys';
import { TrackerRefSchema } from './tracker-ref';

export const IssueCommentSchema = z.object({
  /** The tracker's id of the comment (a number on GitHub/Gitea, a UUID on Linear), as text. */
  id: z.string(),
  author: z.string(),
  body: z.string(),
  at: z.string(),
});
export type IssueComment = z.infer<typeof IssueCommentSchema>;

export const TrackerIssueSchema = z.object({
  ref: TrackerRefSchema,
  /** The issue's page, for people (workpad, status, the PR body). */
  url: z.string(),
  title: z.string(),
  body: z.string(),
  labels: z.array(z.string()),
  /** Open or closed, in the tracker's words (Linear: the workflow state's name). */
  state: z.string(),
  comments: z.array(IssueCommentSchema),
  /** Sub-issues and linked issues where the tracker has them: their reference text and title only. */
  related: z.array(z.object({ ref: z.string(), title: z.string() })),
});
export type TrackerIssue = z.infer<typeof TrackerIssueSchema>;

/**
 * What the saga keeps of its issue (SagaInput.source): where it came from, and the request as the planner
 * reads it, already made safe (`untrustedRequestText`).
 */
export const IntakeSourceSchema = z.object({
  ref: TrackerRefSchema,
  url: z.string(),
  /** Control characters stripped, one line. */
  title: z.string(),
  /** The issue (title, body, labels, comments, related) as untrusted, capped text for the planner. */
  request: z.string(),
});
export type IntakeSource = z.infer<typeof IntakeSourceSchema>;

/** A tracker as the activities take it: the API root and the NAME of the variable holding its token. */
export const TrackerConnectionSchema = z.object({
  kind: z.enum(TRACKER_KINDS),
  url: z.string(),
  tokenEnv: z.string(),
});
export type TrackerConnection = z.infer<typeof TrackerConnectionSchema>;

/** A saga from an issue: the tracker it writes back to and where its questions go (`intake:`). */
export const IntakeSettingsSchema = z.object({
  tracker: TrackerConnectionSchema,
  questions: z.enum(INTAKE_QUESTIONS),
});
export type IntakeSettings = z.infer<typeof IntakeSettingsSchema>;

/** A comment on the issue after the saga asked, with whether its author may write to the repository/team. */
export const IssueReplySchema = IssueCommentSchema.extend({ canWrite: z.boolean() });
export type IssueReply = z.infer<typeof IssueReplySchema>;
