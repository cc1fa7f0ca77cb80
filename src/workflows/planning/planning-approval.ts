/**
 * The approval gate (docs/PROCEDURE.md §2.8, §2.9): each plan version is written to SAGA.md, reviewed first when
 * quality-locked, and put to the user, who approves, rejects, or asks for a revision (and may correct an
 * autonomous decision by its number, a learning for the repo's next sagas).
 */
import { patched, setCurrentDetails } from '@temporalio/workflow';
import type { Plan } from '../../domain/plan';
import { unresolvedCheckLines } from '../../domain/plan/check-programs';
import { applyCorrections, correctableDecisions } from '../../domain/planning/autonomous-decisions';
import { correctionsLine, planApprovalRequest } from '../../domain/planning/elicitation';
import { parseDecisionCorrections, type CorrectableDecision } from '../../domain/planning/memory';
import { reviewedApproval } from '../../domain/planning/plan-review';
import type { Answer, InteractionRequest } from '../../domain/contract/state';
import { ask } from '../ask';
import { PATCHES } from '../patches';
import type { PlanningResult, PlanningSession } from './planning-session';
import { draftPlan, validatePlanned } from './planning-steps';
import { reviewLoop } from '../review-loop';
import { sagaLog } from '../shared';
import { PLAN_APPROVAL_CHOICE } from '../../domain/contract/answer-choices';

/** Asks for approval of each version until the user approves or rejects, or a revision cannot be had. */
export async function approvalGate(
  session: PlanningSession,
  first: Plan,
  /** Drafting's starting point; null for a plan given with `--plan` (no fresh session can draft it again). */
  draft: Record<string, unknown> | null,
): Promise<PlanningResult> {
  const { ctx } = session;
  session.plan = first;
  for (let version = 1; ; version++) {
    await session.writeSpecTree(session.plan);
    // An escalated or forced review is said at the approval, which then recommends nothing.
    let review = reviewedApproval('pass');
    if (ctx.flags.quality_locked) {
      const reviewed = await qualityReview(session, version, draft);
      // A revision stopped at the budget leaves the plan unrevised: the saga ends, it is not approved.
      if (reviewed === 'abort' || session.runs.budgetStopped())
        return session.result(false, session.plan, version);
      review = reviewedApproval(reviewed);
    }
    await session.publish(version, 'awaiting-approval');
    setCurrentDetails('Waiting for plan approval');
    // Autonomous decisions are listed so the user can correct one by number.
    const correctable = ctx.flags.autonomous
      ? correctableDecisions(session.decisions, session.defaultsAdopted)
      : [];
    const request = planApprovalRequest(version, session.specPath, review, session.costEstimate, correctable);
    const answer = await ask(ctx.sagaWorkflowId, await withCheckFindings(session, request));
    if (answer.choice === PLAN_APPROVAL_CHOICE.approve) {
      session.closing.push(session.planEvent(version, 'approved'), {
        type: 'log',
        line: `Plan version ${version} approved by ${answer.user}`,
      });
      // Acceptance lists them too: a correction there is a learning as well.
      const corrections = correctable.length ? { decisions: correctable } : {};
      return session.result(true, session.plan, version, corrections);
    }
    if (answer.choice === PLAN_APPROVAL_CHOICE.reject) {
      session.closing.push(session.planEvent(version, 'rejected'), {
        type: 'log',
        line: `Plan rejected by ${answer.user}`,
      });
      return session.result(false, session.plan, version);
    }
    const revised = await revise(session, version, answer, correctable);
    if (!revised) return session.result(false, session.plan, version);
    session.plan = revised;
  }
}

/** The approval question with the plan's checks that cannot run here named (they would fail with 127). */
async function withCheckFindings(
  session: PlanningSession,
  request: InteractionRequest,
): Promise<InteractionRequest> {
  if (!patched(PATCHES.checkResolution)) return request;
  const { ctx } = session;
  const lines = unresolvedCheckLines(
    await session.quick.resolvePlanChecks({
      repo: ctx.repo,
      plan: session.plan,
      passEnv: ctx.settings.passEnv,
    }),
  );
  if (!lines.length) return request;
  await sagaLog(ctx, lines.join(' '));
  return { ...request, prompt: [request.prompt, ...lines].join('\n') };
}

/** The quality-locked review of the plan; each iteration reviews, and revises, its latest version. */
function qualityReview(session: PlanningSession, version: number, draft: Record<string, unknown> | null) {
  const { ctx, planner } = session;
  return reviewLoop(ctx, {
    phase: 'planning',
    checkpoint: 'plan-approval',
    subject: 'plan',
    taskId: 'plan',
    workdir: session.scratch,
    context: () => ({ plan: session.plan }),
    revise: async (findings, iteration) => {
      const current: Plan = session.plan;
      const note = { plan: current, note: findings, version: `${version}-r${iteration}` };
      return (await planner('revise', note, validatePlanned)) ?? current;
    },
    // The checkpoint's [R] revises with the user's note; [N] has a fresh planner session draft it again.
    reviseWithNote: async (note, n) =>
      (await planner('revise', { plan: session.plan, note, version: `${version}-c${n}` }, validatePlanned)) ??
      session.plan,
    ...(draft
      ? {
          newSession: async (n: number) =>
            (await draftPlan(ctx, planner, { ...draft, version: `${version}-n${n}` })) ?? session.plan,
        }
      : {}),
    onRevised: async (next) => {
      session.plan = next;
      await session.writeSpecTree(next);
    },
  });
}

/** The user asked for a revision: corrections of autonomous decisions recorded, then the planner revises. */
async function revise(
  session: PlanningSession,
  version: number,
  answer: Answer,
  correctable: CorrectableDecision[],
): Promise<Plan | null> {
  const { ctx } = session;
  await session.publish(version, 'revising');
  await sagaLog(ctx, `Revision requested by ${answer.user}: ${answer.text ?? ''}`);
  const corrections = correctable.length ? await recordCorrections(session, answer, correctable) : [];
  return session.planner(
    'revise',
    {
      plan: session.plan,
      note: answer.text,
      version: version + 1,
      problem: session.problem,
      ...(corrections.length ? { corrections } : {}),
    },
    validatePlanned,
  );
}

/** A user correcting an autonomous decision is a learning for the repo's next sagas; the decision changes. */
async function recordCorrections(
  session: PlanningSession,
  answer: Answer,
  correctable: CorrectableDecision[],
) {
  const { ctx } = session;
  const { corrections, unknown } = parseDecisionCorrections(answer.text ?? '', correctable);
  if (unknown.length)
    await sagaLog(ctx, `Revise note names no listed autonomous decision: ${unknown.join(', ')} (ignored)`);
  if (corrections.length) {
    await session.quick.recordCorrections({
      repo: ctx.repo,
      saga: ctx.name,
      sagaDir: ctx.sagaDir,
      user: answer.user,
      corrections,
    });
    await sagaLog(ctx, correctionsLine(corrections));
    applyCorrections(corrections, session.decisions, session.defaultsAdopted);
  }
  return corrections;
}
