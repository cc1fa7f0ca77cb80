/**
 * What the fleet's agents are doing right now, for `saga status --watch`: each running task workflow's
 * pending activity carries the agent's heartbeat (AgentProgress: attempt, elapsed time, last readable
 * line, the CLI's session id, tokens and cost so far), and its current details say what step it is on.
 * The Web UI's pending-activity view shows the same details. Nothing here changes a saga.
 */
import type { Client } from '@temporalio/client';
import type { AgentProgress } from '../activities/agents';
import type { MilestoneState, SagaStatus, Usage } from '../domain/contract/state';
import { addUsage, formatUsage, noUsage } from '../domain/agents/usage';
import { fromRawPayload } from './payloads';

export interface RunningAgent {
  taskId: string;
  slug: string;
  workflowId: string;
  delegation: number;
  /** The task workflow's current details, e.g. "Attempt 2: agent running"; null when unknown. */
  step: string | null;
  /** The activity in flight (runRoleAgent, runChecks, prepareWorktree...). */
  activity: string | null;
  elapsedMs: number | null;
  lastLine: string;
  outputBytes: number;
  /** The attempt whose agent is running (from its heartbeat); null before the agent has started. */
  attempt: number | null;
  sessionId: string | null;
  /** Tokens and cost of the running agent so far; null until its CLI has reported any. */
  usage: Usage | null;
}

type Heartbeat = Partial<AgentProgress>;

const tsMs = (ts: { seconds?: unknown; nanos?: number | null } | null | undefined): number | null =>
  ts?.seconds == null ? null : Number(ts.seconds) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);

/** Per running task: its newest pending activity's heartbeat and the workflow's current step. */
export async function runningAgents(
  client: Client,
  status: SagaStatus,
  now = Date.now(),
): Promise<RunningAgent[]> {
  const running = status.milestones
    .flatMap((m) => m.tasks)
    .filter((t) => t.status === 'running' && t.workflowId);
  return Promise.all(
    running.map(async (task): Promise<RunningAgent> => {
      const handle = client.workflow.getHandle(task.workflowId!);
      const agent: RunningAgent = {
        taskId: task.id,
        slug: task.slug,
        workflowId: task.workflowId!,
        delegation: task.delegations,
        step: null,
        activity: null,
        elapsedMs: null,
        lastLine: '',
        outputBytes: 0,
        attempt: null,
        sessionId: null,
        usage: null,
      };
      const [description, metadata] = await Promise.allSettled([
        handle.describe(),
        handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata'),
      ]);
      if (metadata.status === 'fulfilled') agent.step = metadata.value?.currentDetails || null;
      if (description.status === 'fulfilled') {
        const pending = description.value.raw.pendingActivities ?? [];
        const current = pending[pending.length - 1];
        if (current) {
          agent.activity = current.activityType?.name ?? null;
          const payload = current.heartbeatDetails?.payloads?.[0];
          // Heartbeat details are encrypted like any payload when the codec is set.
          const beat = payload
            ? await fromRawPayload<Heartbeat | null>(client, payload).catch(() => null)
            : null;
          const started = tsMs(current.lastStartedTime);
          agent.elapsedMs = beat?.elapsedMs ?? (started === null ? null : now - started);
          agent.lastLine = beat?.lastLine ?? '';
          agent.outputBytes = beat?.outputBytes ?? 0;
          agent.attempt = typeof beat?.attempt === 'number' ? beat.attempt : null;
          agent.sessionId = beat?.sessionId ?? null;
          agent.usage = beat?.usage ?? null;
        }
      }
      return agent;
    }),
  );
}

export function renderRunningAgents(agents: RunningAgent[]): string[] {
  if (agents.length === 0) return [];
  return [
    'Running agents:',
    ...agents.map((a) => {
      const attempt = a.attempt === null ? '' : `attempt ${a.attempt}, `;
      const elapsed = a.elapsedMs === null ? '' : `, ${Math.round(a.elapsedMs / 1000)}s`;
      const step = a.step ?? a.activity ?? 'starting';
      const spent = a.usage ? ` [${formatUsage(a.usage)} so far]` : '';
      const last = a.lastLine ? ` — ${a.lastLine.slice(0, 100)}` : '';
      return `  ${a.taskId} ${a.slug} (${attempt}delegation ${a.delegation}${elapsed}): ${step}${spent}${last}`;
    }),
  ];
}

/** A milestone's usage: the sum of its tasks' agent runs. */
export const milestoneUsage = (m: MilestoneState): Usage =>
  m.tasks.reduce((sum, t) => addUsage(sum, t.usage), noUsage());

export { formatUsage };
