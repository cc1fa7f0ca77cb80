/**
 * The `runAgent` activity: runs one coding agent process (any role) with its prompt
 * file, report file and transcript under `<sagaDir>/runs/<label>/`, heartbeating while it works (run.ts).
 * Only a small summary goes back into workflow history; everything big stays in those files.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { checksRunAfter } from '../../domain/agents/cli-output';
import { zodIssueLines } from '../../domain/text/zod-errors';
import { findSagaRoot } from '../config-loader';
import { verifyAgentProfile } from '../config-verify';
import { RunAgentInputSchema, type RunAgentInput, type RunAgentResult } from './input';
import { interruptedSession } from './resume';
import { executeAgentRun } from './run';

export {
  AGENT_ROLES,
  RunAgentInputSchema,
  type AgentMachine,
  type AgentProgress,
  type AgentRunHooks,
  type RunAgentInput,
  type RunAgentResult,
} from './input';
export { executeAgentRun } from './run';

export function createAgentActivities(deps: {
  sagaHome: string;
  nodePath?: string;
  sagaRoot?: string;
  /**
   * Run profiles as the input gives them, unchecked against the config files: only for tests of the run
   * itself. A worker re-resolves each profile from its config (verifyAgentProfile).
   */
  profilesFromInput?: boolean;
}) {
  const machine = {
    nodePath: deps.nodePath ?? process.execPath,
    sagaRoot: deps.sagaRoot ?? findSagaRoot(),
    sagaHome: deps.sagaHome,
  };

  return {
    async runAgent(rawInput: RunAgentInput): Promise<RunAgentResult> {
      const parsed = RunAgentInputSchema.safeParse(rawInput);
      if (!parsed.success) {
        const problems = zodIssueLines(parsed.error, '(input)');
        throw ApplicationFailure.nonRetryable(
          `Invalid runAgent input: ${problems.join('; ')}`,
          'InvalidInput',
        );
      }
      if (!deps.profilesFromInput) await verifyAgentProfile(parsed.data.profile, deps.sagaHome);
      const ctx = Context.current();
      const activity = `${ctx.info.workflowExecution?.runId ?? '-'}/${ctx.info.activityId}`;
      // A retry after the worker died mid-run continues the session the dead try had started.
      const interrupted =
        ctx.info.attempt > 1
          ? await interruptedSession(parsed.data, ctx.info.heartbeatDetails, activity)
          : null;
      const result = await executeAgentRun(
        interrupted ? { ...parsed.data, resume: interrupted } : parsed.data,
        machine,
        {
          heartbeat: (details) => ctx.heartbeat(details),
          signal: ctx.cancellationSignal,
          label: `activity attempt ${ctx.info.attempt}`,
          activity,
        },
      );
      if (ctx.cancellationSignal.aborted) {
        // The tree is already dead (runProcess killed it); report the cancellation as Temporal expects.
        throw ctx.cancellationSignal.reason ?? new CancelledFailure('Activity cancelled');
      }
      // An implementer's failure is its task's answer (the task ends blocked with it); a planner, reviewer or
      // resolver that cannot run at all leaves its workflow nothing to go on.
      if (
        result.failure &&
        !result.failure.retryable &&
        !checksRunAfter(result.failure) &&
        parsed.data.role !== 'implementer'
      )
        throw ApplicationFailure.nonRetryable(result.failure.message, 'AgentCannotRun');
      return result;
    },
  };
}
