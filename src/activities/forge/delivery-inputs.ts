/**
 * The delivery activities' inputs, checked before anything runs: a workflow that passes a wrong branch, a
 * sha that is not one or a PR number of 0 gets one non-retryable failure naming what is wrong, and nothing
 * on the forge or in the repository changes. Only the saga's own branches may be moved (isSagaBranch).
 */
import * as path from 'node:path';
import { z } from 'zod';
import { isSagaBranch } from '../../domain/contract/naming';
import { PR_BODY_BEGIN, PR_BODY_END } from '../../domain/delivery/pr-body';
import { ForgeTargetSchema, MERGE_METHODS, ReviewCommentSchema } from '../../domain/delivery/forge-shapes';

const nonOption = (what: string) =>
  z
    .string()
    .min(1, `${what} is required`)
    .refine((s) => !s.startsWith('-'), `${what} must not start with '-'`);

const sagaBranch = (what: string) =>
  nonOption(what).refine(isSagaBranch, (s) => ({ message: `${what} '${s}' is not a saga branch` }));

const repoPath = z
  .string()
  .min(1, 'repo is required')
  .transform((p) => path.resolve(p));

const sha = (what: string) =>
  z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, `${what} must be a full commit sha`);
/**
 * The saga's part of a PR's body, as renderPrBody writes it: between its markers, so an update replaces it
 * in place (mergePrBody) instead of stacking one more copy on top of the body each time.
 */
const sagaBody = z
  .string()
  .refine(
    (body) => body.startsWith(PR_BODY_BEGIN) && body.endsWith(PR_BODY_END),
    "body must be the saga's part of the PR body (renderPrBody), between its markers",
  );

const prNumber = z.number().int().positive('a pull request number is positive');

const ForgeRefSchema = z.object({
  repo: repoPath,
  remote: nonOption('remote'),
  target: ForgeTargetSchema,
});

export const DeliverMilestoneInputSchema = ForgeRefSchema.extend({
  head: sagaBranch('head'),
  headSha: sha('headSha'),
  base: nonOption('base'),
  title: z.string().trim().min(1, 'title must not be empty'),
  body: sagaBody,
});

export const LookInputSchema = z.object({
  target: ForgeTargetSchema,
  prs: z.array(z.object({ number: prNumber, headSha: sha('headSha'), etag: z.string().nullable() })),
});

export const LandFixInputSchema = ForgeRefSchema.extend({
  fixBranch: nonOption('fixBranch'),
  stack: z.array(z.object({ head: sagaBranch('stack head'), number: prNumber })).min(1, 'stack is empty'),
  at: z.number().int().nonnegative(),
  integrationBranch: sagaBranch('integrationBranch'),
}).superRefine((input, ctx) => {
  if (input.at >= input.stack.length) {
    ctx.addIssue({ code: 'custom', path: ['at'], message: `at ${input.at} is past the stack's top` });
  }
  const heads = input.stack.map((s) => s.head);
  if (new Set(heads).size !== heads.length) {
    ctx.addIssue({ code: 'custom', path: ['stack'], message: 'a branch is in the stack twice' });
  }
  if (heads.includes(input.fixBranch)) {
    ctx.addIssue({ code: 'custom', path: ['fixBranch'], message: 'the fix branch is a delivery branch' });
  }
});

export const ReplyInputSchema = z.object({
  target: ForgeTargetSchema,
  number: prNumber,
  comment: ReviewCommentSchema,
  body: z.string().trim().min(1, 'body must not be empty'),
});

export const UpdateBodyInputSchema = z.object({
  target: ForgeTargetSchema,
  number: prNumber,
  body: sagaBody,
});

export const MarkReadyInputSchema = z.object({ target: ForgeTargetSchema, numbers: z.array(prNumber) });

export const MergeInputSchema = z.object({
  target: ForgeTargetSchema,
  prs: z.array(z.object({ number: prNumber, base: nonOption('base'), headSha: sha('headSha') })),
  baseBranch: nonOption('baseBranch'),
  method: z.enum(MERGE_METHODS),
});
