/**
 * The parts of Gitea's `/api/v1` answers the Gitea adapter reads (checked against the swagger of Gitea
 * 1.27.3, `/api/swagger`). Unknown fields pass; a missing field the adapter needs fails the parse, so a
 * changed API is an error that names the call rather than a wrong answer.
 */
import { z } from 'zod';

export const GiteaUserSchema = z.object({
  id: z.number(),
  login: z.string(),
});

const BranchInfoSchema = z.object({
  ref: z.string(),
  sha: z.string(),
  repo_id: z.number().nullish(),
});

export const GiteaPullSchema = z.object({
  number: z.number(),
  html_url: z.string(),
  title: z.string(),
  body: z.string().nullish(),
  draft: z.boolean().nullish(),
  state: z.enum(['open', 'closed']),
  merged: z.boolean().nullish(),
  review_comments: z.number().int().nonnegative().nullish(),
  head: BranchInfoSchema,
  base: BranchInfoSchema,
});
export type GiteaPull = z.infer<typeof GiteaPullSchema>;
export const GiteaPullListSchema = z.array(GiteaPullSchema);

/** A commit status's state, as Gitea 1.27 spells it. */
export const GiteaStatusStateSchema = z.enum([
  'pending',
  'success',
  'error',
  'failure',
  'warning',
  'skipped',
]);
export type GiteaStatusState = z.infer<typeof GiteaStatusStateSchema>;

export const GiteaCommitStatusSchema = z.object({
  context: z.string().nullish(),
  status: GiteaStatusStateSchema,
  description: z.string().nullish(),
  target_url: z.string().nullish(),
});
export type GiteaCommitStatus = z.infer<typeof GiteaCommitStatusSchema>;

export const GiteaCombinedStatusSchema = z.object({
  sha: z.string().nullish(),
  total_count: z.number().nullish(),
  statuses: z.array(GiteaCommitStatusSchema).nullish(),
});

export const GiteaReviewSchema = z.object({
  id: z.number(),
  state: z.string(),
  user: GiteaUserSchema.nullish(),
});
export const GiteaReviewListSchema = z.array(GiteaReviewSchema);

export const GiteaReviewCommentSchema = z.object({
  id: z.number(),
  body: z.string(),
  path: z.string().nullish(),
  /** The line on the new side (Gitea calls it position); 0 when the comment is on the old side. */
  position: z.number().nullish(),
  /** The line on the old side; 0 when the comment is on the new side. */
  original_position: z.number().nullish(),
  commit_id: z.string().nullish(),
  user: GiteaUserSchema.nullish(),
  resolver: GiteaUserSchema.nullish(),
  pull_request_review_id: z.number().nullish(),
});
export type GiteaReviewComment = z.infer<typeof GiteaReviewCommentSchema>;
export const GiteaReviewCommentListSchema = z.array(GiteaReviewCommentSchema);

export const GiteaPermissionSchema = z.object({
  permission: z.string(),
});

export const GiteaRepoSchema = z.object({
  permissions: z
    .object({ admin: z.boolean().nullish(), push: z.boolean().nullish(), pull: z.boolean().nullish() })
    .nullish(),
});

/** Gitea's error body (`{"message", "url"}`); anything else is shown as text. */
export const GiteaErrorSchema = z.object({ message: z.string() });
