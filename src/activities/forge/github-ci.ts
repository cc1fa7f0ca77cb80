/**
 * A head commit's CI on GitHub, from its combined commit status and its check runs (pure: github.ts reads
 * both). A check run concluded failure, timed_out, cancelled, action_required or startup_failure fails;
 * neutral, skipped and stale never fail; one not completed is pending. A status of failure or error fails.
 */
import { z } from 'zod';
import { CI_LOG_EXCERPT_CHARS } from '../../domain/delivery/ci-watch';
import { combinedState } from '../../domain/delivery/forge-shapes';
import type { CiState, ForgeCheck } from './port';

export const CombinedStatusSchema = z.object({
  sha: z.string(),
  statuses: z.array(
    z.object({
      context: z.string(),
      state: z.string(),
      description: z.string().nullable(),
      target_url: z.string().nullable(),
    }),
  ),
});
export type CombinedStatus = z.infer<typeof CombinedStatusSchema>;

export const CheckRunsSchema = z.object({
  total_count: z.number(),
  check_runs: z.array(
    z.object({
      name: z.string(),
      status: z.string(),
      conclusion: z.string().nullable(),
      details_url: z.string().nullable(),
      html_url: z.string().nullable(),
      output: z.object({
        title: z.string().nullable(),
        summary: z.string().nullable(),
        text: z.string().nullable(),
      }),
    }),
  ),
});
export type CheckRuns = z.infer<typeof CheckRunsSchema>;

const FAILING = new Set(['failure', 'timed_out', 'cancelled', 'action_required', 'startup_failure']);

function statusState(state: string): ForgeCheck['state'] {
  if (state === 'success') return 'success';
  if (state === 'failure' || state === 'error') return 'failure';
  return 'pending';
}

function runState(status: string, conclusion: string | null): ForgeCheck['state'] {
  if (status !== 'completed' || conclusion === null) return 'pending';
  if (conclusion === 'success') return 'success';
  if (FAILING.has(conclusion)) return 'failure';
  if (conclusion === 'skipped') return 'skipped';
  return 'neutral'; // neutral, stale
}

/**
 * A failing run's log excerpt: its output's title, summary and text (what the check wrote), the tail kept.
 * GitHub Actions' full logs are a zip download per job; the output text is what the API serves inline.
 */
export function outputExcerpt(output: CheckRuns['check_runs'][number]['output']): string | null {
  const text = [output.title, output.summary, output.text]
    .filter((s): s is string => !!s?.trim())
    .join('\n\n');
  if (!text) return null;
  return text.length > CI_LOG_EXCERPT_CHARS ? `…${text.slice(-CI_LOG_EXCERPT_CHARS)}` : text;
}

/** CI state of `sha`: failure if any check failed, else pending while any runs (or none reported yet), else success. */
export function ciStateOf(
  sha: string,
  combined: CombinedStatus,
  runs: CheckRuns,
  etag: string | null,
): CiState {
  const checks: ForgeCheck[] = [
    ...combined.statuses.map((s) => ({
      name: s.context,
      state: statusState(s.state),
      description: s.description ?? '',
      targetUrl: s.target_url,
      logExcerpt: null,
    })),
    ...runs.check_runs.map((r) => {
      const state = runState(r.status, r.conclusion);
      return {
        name: r.name,
        state,
        description: r.output.title ?? r.conclusion ?? r.status,
        targetUrl: r.details_url ?? r.html_url,
        logExcerpt: state === 'failure' ? outputExcerpt(r.output) : null,
      };
    }),
  ];
  // No check reported yet is pending, not success: CI may not have started on a just-pushed commit.
  return { sha, state: combinedState(checks), checks, etag };
}

/** One ETag for the two conditional reads (the combined status's and the check runs'). */
export function joinEtags(status: string | null, checks: string | null): string | null {
  return status && checks ? JSON.stringify([status, checks]) : null;
}

export function splitEtags(etag: string | null | undefined): [string | null, string | null] {
  if (!etag) return [null, null];
  try {
    const parsed = JSON.parse(etag) as unknown;
    if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((e) => typeof e === 'string')) {
      return [parsed[0] as string, parsed[1] as string];
    }
  } catch {
    // not ours: read both afresh
  }
  return [null, null];
}
