/** The git activities' inputs, checked before anything runs: a bad input fails with the reason, no retry. */
import { zodIssueLines } from '../../domain/text/zod-errors';
import * as path from 'node:path';
import { z } from 'zod';
import {
  ARCHIVE_REF_PREFIX,
  isSagaBranch,
  SAGA_BRANCH_PREFIX,
  SAGA_NAME_PATTERN,
} from '../../domain/contract/naming';
import { CommandSandboxSchema } from '../../domain/config/sandbox';
import { fail } from './queries';

const nonOption = (what: string) =>
  z
    .string()
    .min(1, `${what} is required`)
    .refine((s) => !s.startsWith('-'), `${what} must not start with '-'`);
const absolutePath = (what: string) =>
  z
    .string()
    .min(1, `${what} is required`)
    .refine((p) => path.isAbsolute(p), `${what} must be an absolute path`)
    .transform((p) => path.resolve(p));
const repoPath = z
  .string()
  .min(1, 'repo is required')
  .transform((p) => path.resolve(p));
const sagaName = z.string().regex(SAGA_NAME_PATTERN, 'sagaName must be a valid saga name');
const message = z.string().trim().min(1, 'message must not be empty');

export const CheckRepoInputSchema = z.object({ repo: repoPath, base: nonOption('base').optional() });
export const PrepareWorktreeInputSchema = z.object({
  repo: repoPath,
  branch: nonOption('branch'),
  worktree: absolutePath('worktree'),
  base: nonOption('base'),
  copyFiles: z.array(z.string().min(1)).default([]),
  setup: z.array(z.array(z.string()).min(1, 'a setup command needs at least the program')).default([]),
  /** Worker variables the setup commands also get (saga.config.yaml `pass_env`). */
  passEnv: z.array(z.string()).optional(),
  env: z.record(z.string()).optional(),
  setupTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(20 * 60_000),
  /** Set-up commands run confined like agents (saga.config.yaml `sandbox`, `network`). */
  sandbox: CommandSandboxSchema.default({}),
});
/** Copy and set-up of a worktree that already holds its content (a milestone's, after its merges). */
export const SetUpWorktreeInputSchema = PrepareWorktreeInputSchema.omit({ base: true });
export const DEFAULT_HANDOFF_MAX_FILES = 2000;
export const DEFAULT_HANDOFF_MAX_FILE_BYTES = 5 * 1024 * 1024;
export const CommitHandoffInputSchema = z.object({
  worktree: absolutePath('worktree'),
  message,
  baseCommit: nonOption('baseCommit').optional(),
  /** The task branch: the commit lands there whatever the agent left checked out (or the handoff fails). */
  branch: nonOption('branch').optional(),
  /** `worktree.copy` entries: never committed, whatever .gitignore says by then. */
  exclude: z.array(z.string().min(1)).default([]),
  maxFiles: z.number().int().positive().default(DEFAULT_HANDOFF_MAX_FILES),
  maxFileBytes: z.number().int().positive().default(DEFAULT_HANDOFF_MAX_FILE_BYTES),
  /** No pre-commit hook, unless the config says `handoff.run_hooks` (then it runs confined). */
  skipHooks: z.boolean().default(true),
});
export const RemoveWorktreeInputSchema = z.object({
  repo: repoPath,
  worktree: absolutePath('worktree'),
  /** `worktree.copy` entries: copies of the user's files, never work, so they never keep a worktree. */
  copies: z.array(z.string().min(1)).default([]),
});
export const EnsureIntegrationWorktreeInputSchema = z.object({
  repo: repoPath,
  branch: nonOption('branch'),
  worktree: absolutePath('worktree'),
  base: nonOption('base'),
});
export const MergeBranchInputSchema = z.object({
  worktree: absolutePath('worktree'),
  branch: nonOption('branch'),
  message,
});
export const CompleteMergeInputSchema = z.object({ worktree: absolutePath('worktree'), message });
export const WorktreeInputSchema = z.object({ worktree: absolutePath('worktree') });
export const ResetHardInputSchema = z.object({
  worktree: absolutePath('worktree'),
  commit: nonOption('commit'),
});
export const ResetTaskBranchInputSchema = z.object({
  repo: repoPath,
  branch: nonOption('branch').refine(isSagaBranch, `branch must be a saga branch (${SAGA_BRANCH_PREFIX}...)`),
  to: nonOption('to'),
  archiveRef: nonOption('archiveRef').refine(
    (r) => r.startsWith(ARCHIVE_REF_PREFIX),
    `archiveRef must start with ${ARCHIVE_REF_PREFIX}`,
  ),
});
export const IsAncestorInputSchema = z.object({
  repo: repoPath,
  commit: nonOption('commit'),
  of: nonOption('of'),
});
export const SagaWorktreesInputSchema = z.object({ repo: repoPath, sagaName });
export const CleanupSagaWorktreesInputSchema = SagaWorktreesInputSchema.extend({
  force: z.boolean().default(false),
});
export const ReconcileGitInputSchema = z.object({
  repo: repoPath,
  sagaName,
  integrationBranch: nonOption('integrationBranch'),
  tasks: z.array(
    z.object({
      key: z.string().min(1),
      branch: nonOption('branch'),
      commit: nonOption('commit').nullable(),
      /** When the saga records the task as integrated, a missing merge is reported. */
      expectMerged: z.boolean().optional(),
    }),
  ),
});
export const FastForwardBaseInputSchema = z.object({
  repo: repoPath,
  base: nonOption('base'),
  integrationBranch: nonOption('integrationBranch'),
});

export function parseInput<S extends z.ZodTypeAny>(activity: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = zodIssueLines(parsed.error, 'input').join('; ');
  throw fail('InvalidInput', `${activity}: invalid input: ${issues}`);
}
