/** The parts of Gitea's issue answers the tracker adapter reads (checked against Gitea 1.27.3's swagger). */
import { z } from 'zod';

const User = z.object({ login: z.string() });

export const GiteaLabelSchema = z.object({ id: z.number(), name: z.string() });
export const GiteaLabelListSchema = z.array(GiteaLabelSchema);

export const GiteaIssueSchema = z.object({
  number: z.number(),
  title: z.string(),
  body: z.string().nullish(),
  html_url: z.string(),
  state: z.string(),
  labels: z.array(GiteaLabelSchema).nullish(),
  pull_request: z.unknown().nullish(),
  created_at: z.string().nullish(),
  repository: z.object({ owner: z.string(), name: z.string() }).nullish(),
});
export const GiteaIssueListSchema = z.array(GiteaIssueSchema);

export const GiteaCommentSchema = z.object({
  id: z.number(),
  body: z.string().nullish(),
  user: User.nullish(),
  created_at: z.string(),
});
export const GiteaCommentListSchema = z.array(GiteaCommentSchema);
export const GiteaMeSchema = User;
export const GiteaPermissionSchema = z.object({ permission: z.string() });
