/** Continuing a CLI's session: the session a crashed try left, and when a resume cannot happen. */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { AGENT_RUN_FILE } from '../../domain/config/agent-presets';
import { runDirectory } from '../process/process';
import type { AgentProgress, AgentRunInput, ResumeRequest } from './input';

/**
 * The session of this run that a previous try of the same activity had started: from its last heartbeat,
 * else from the run folder's agent.json (written as soon as the CLI printed the id, heartbeats are
 * throttled). Null when that try never got that far.
 */
export async function interruptedSession(
  input: AgentRunInput,
  details: unknown,
  activity: string,
): Promise<ResumeRequest | null> {
  const beat = details as Partial<AgentProgress> | undefined;
  if (beat?.runLabel === input.runLabel && typeof beat.sessionId === 'string' && beat.sessionId)
    return { sessionId: beat.sessionId, host: beat.host ?? null, reason: 'interrupted' };
  const file = path.join(runDirectory(input.sagaDir, input.runLabel), AGENT_RUN_FILE);
  const recorded = await fs
    .readFile(file, 'utf8')
    .then((t) => JSON.parse(t) as { activity?: string; sessionId?: string | null; host?: string })
    .catch(() => null);
  if (recorded?.activity === activity && recorded.sessionId)
    return { sessionId: recorded.sessionId, host: recorded.host ?? null, reason: 'interrupted' };
  return null;
}

/** Why an asked-for resume cannot happen here; null when it can be tried. */
export function resumeObstacle(input: AgentRunInput, resume: ResumeRequest, host: string) {
  if (!input.profile.resumeCommand)
    return `profile ${input.profile.name} does not resume sessions (its CLI has no resume, or resume: false)`;
  if (!resume.sessionId) return 'the previous run printed no session id';
  if (resume.host && resume.host !== host)
    return `session ${resume.sessionId} was recorded on ${resume.host}, this worker runs on ${host}`;
  return null;
}
