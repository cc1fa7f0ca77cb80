/**
 * Why an agent run failed, as read from its CLI's output, and whether another attempt could fix it: the
 * failure kinds, and the diagnoses every CLI's reader shares (auth and model errors, denied tool calls).
 */
import { z } from 'zod';
import { firstMatchingLine, oneLine } from './text';

export const AGENT_FAILURE_KINDS = [
  'not-installed',
  'not-authenticated',
  'permission-denied',
  'model-not-found',
  'network-unreachable',
  'max-turns',
  'budget',
  'cli-error',
] as const;
export type AgentFailureKind = (typeof AGENT_FAILURE_KINDS)[number];

export const AgentFailureSchema = z.object({
  kind: z.enum(AGENT_FAILURE_KINDS),
  /** Could another attempt, unchanged, succeed? */
  retryable: z.boolean(),
  /** One line for the task status, the escalation prompt and `saga status`. */
  message: z.string(),
});
export type AgentFailure = z.infer<typeof AgentFailureSchema>;

/** Failures after which the agent may still have done the task's work: the checks decide. */
const CHECKS_STILL_RUN: ReadonlySet<AgentFailureKind> = new Set(['permission-denied', 'max-turns', 'budget']);
const RETRYABLE: ReadonlySet<AgentFailureKind> = new Set(['max-turns', 'cli-error']);

/** Whether the task's checks run after this run (they never run after a crash, timeout or hard failure). */
export const checksRunAfter = (failure: AgentFailure | null | undefined): boolean =>
  !failure || CHECKS_STILL_RUN.has(failure.kind);

export const SEE_README = "see README 'Agent presets'";

export function failure(kind: AgentFailureKind, message: string): AgentFailure {
  return { kind, retryable: RETRYABLE.has(kind), message };
}

export function notInstalledFailure(profile: string, program: string, detail: string): AgentFailure {
  return failure(
    'not-installed',
    `agent ${profile} could not start: '${program}' ${detail} — install it or fix the profile's command; run 'saga doctor --agent ${profile}'`,
  );
}

/** Auth and model errors, recognised in any CLI's error text. */
export function apiFailure(profile: string, text: string): AgentFailure | null {
  if (AUTH_ERROR.test(text)) return notAuthenticated(profile, errorDetail(text, AUTH_ERROR));
  if (MODEL_ERROR.test(text))
    return failure(
      'model-not-found',
      `agent ${profile}: the model was not found (${errorDetail(text, MODEL_ERROR)}) — fix the model in the profile's command or config`,
    );
  return null;
}

const AUTH_ERROR =
  /Incorrect API key|didn't provide an API key|api_key client option must be set|\b401\b|invalid[ _-]?(x-)?api[ _-]?key|API key not valid|API_KEY_INVALID|authentication[_ ]?error|unauthori[sz]ed|not logged in|please run \/login|no api key|missing api key|Missing environment variable|must specify the \w+ environment variable|AuthenticationError/i;
const MODEL_ERROR =
  /model[_ ]not[_ ]found|not_found_error|does not exist|is not found for API version|unknown model|issue with the selected model|NotFoundError/i;

/** The line that matched, reduced to the API's own `message` when it quotes a JSON error body. */
function errorDetail(text: string, pattern: RegExp): string {
  const line = firstMatchingLine(text, pattern);
  const quoted = /"message"\s*:\s*"((?:[^"\\]|\\.)+)"/.exec(line)?.[1];
  return oneLine(quoted ?? line);
}

export const notAuthenticated = (profile: string, detail: string): AgentFailure =>
  failure(
    'not-authenticated',
    `agent ${profile} is not authenticated (${oneLine(detail)}) — set its API key or log in; run 'saga doctor --agent ${profile}'`,
  );

export function deniedFailure(profile: string, calls: string[]): AgentFailure {
  const shown = calls.slice(0, 3).join(', ');
  const more = calls.length > 3 ? `, and ${calls.length - 3} more` : '';
  return failure(
    'permission-denied',
    `agent ${profile} was denied ${calls.length} tool call${calls.length === 1 ? '' : 's'}: ${shown}${more} — its permission mode blocks them; ${SEE_README}`,
  );
}

/** A failed run whose output has no structured error: look for the usual auth/model texts. */
export function textFailure(profile: string, transcript: string): AgentFailure | null {
  return apiFailure(profile, transcript.slice(-16_384));
}
