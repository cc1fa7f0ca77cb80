/**
 * Phase 1 (Saga procedure steps 2-6): discovery, closing ambiguity with the planner, exit criteria and
 * decomposition, the spec tree on disk, and the approval gate. Intake (name confirmation) happens in the
 * saga workflow before this phase, so nothing is created on disk before the user confirms.
 */
import { CancellationScope, setCurrentDetails } from '@temporalio/workflow';
import type { Environment } from '../domain/planning/environment';
import type { Plan } from '../domain/plan';
import {
  applyCorrections,
  askedBackQuestion,
  autonomousDecisionEntries,
  correctableDecisions,
  countSources,
  memoryEntries,
  rationaleBullets,
  type AdoptedDefault,
} from '../domain/planning/autonomous-decisions';
import {
  correctableDecisionLines,
  parseDecisionCorrections,
  type CorrectableDecision,
} from '../domain/planning/memory';
import {
  AUTONOMY_INSUFFICIENT_NOTE,
  autonomyInsufficient,
  batches,
  PlannerQuestionsOutputSchema,
  questionInteraction,
  summarizePlan,
  zodErrors,
  type PlannerDecision,
  type PlannerQuestion,
} from '../domain/planning/planner';
import { withRestatement } from '../domain/request/intake';
import { sagaWorkflowId } from '../domain/saga/naming';
import type { SagaContext } from '../domain/saga/saga-input';
import type { Answer, PlanSummary, ProgressEvent, Usage } from '../domain/saga/state';
import { noUsage } from '../domain/agents/usage';
import { activitiesFor, quickActivities } from './activity-proxies';
import { ask, askAll } from './ask';
import { plannerRuns, type PlanningSpend } from './planner-runs';
import { reviewedApproval } from '../domain/planning/plan-review';
import { draftPlan, recordRestatement, resolveConflicts, validatePlanned } from './planning-steps';
import { reviewLoop } from './review-loop';
import { planningWorktree, report, reportAll, sagaLog } from './shared';

export interface PlanningInput {
  ctx: SagaContext;
  /** From `--plan`: the question loop is skipped, everything else still happens. */
  plan: Plan | null;
}

export interface PlanningResult {
  approved: boolean;
  plan: Plan | null;
  environment: Environment;
  problem: string;
  versions: number;
  /** What the planner runs cost; the saga counts it in its total (absent in runs recorded before). */
  usage?: Usage;
  /** The saga budget after any raise answered during planning (null: none). */
  sagaBudgetUsd?: number | null;
  /** Progress of the phase's end (the plan's fate, the scratch worktree): the saga applies it, in order. */
  progress?: ProgressEvent[];
  /** The autonomous decisions the user may still correct (D1, D2, ...); absent when there are none. */
  decisions?: CorrectableDecision[];
}

export async function planningWorkflow(input: PlanningInput): Promise<PlanningResult> {
  const { ctx } = input;
  const scratch = planningWorktree(ctx);
  const spend: PlanningSpend = { usage: noUsage(), sagaBudgetUsd: ctx.settings.budget.sagaUsd };
  // The phase's last progress goes back with the result (signals would cost the saga four events each).
  const closing: ProgressEvent[] = [];
  let result: PlanningResult | undefined;
  try {
    result = await runPlanning(input, scratch, spend, closing);
  } finally {
    const finished = await CancellationScope.nonCancellable(() =>
      quickActivities(ctx.hostQueue).finishPlanningWorktree({
        repo: ctx.repo,
        worktree: scratch,
        sagaDir: ctx.sagaDir,
      }),
    );
    closing.push({
      type: 'log',
      line:
        finished.checkoutUnchanged === false
          ? `Warning: the main checkout changed during planning: ${finished.differences.join('; ')}`
          : `Planning worktree ${finished.removed ? 'removed' : 'already gone'}; main checkout unchanged`,
    });
    // Failed or cancelled: no result carries them.
    if (!result) await reportAll(ctx, closing);
  }
  return { ...result, usage: spend.usage, sagaBudgetUsd: spend.sagaBudgetUsd, progress: closing };
}

async function runPlanning(
  { ctx, plan: givenPlan }: PlanningInput,
  scratch: string,
  spend: PlanningSpend,
  /** Where the phase's final progress goes (returned with the result). */
  closing: ProgressEvent[],
): Promise<PlanningResult> {
  const { quick, long } = activitiesFor(ctx, 60 * 60_000);
  const { planner, budgetStopped } = plannerRuns(ctx, scratch, spend);

  setCurrentDetails('Discovering the environment of the target repo');
  const environment = await long.discoverEnvironment({
    repo: ctx.repo,
    sagaDir: ctx.sagaDir,
    timeoutMs: 5 * 60_000,
    worktree: scratch,
    base: ctx.base,
    sandbox: ctx.settings.sandbox,
  });
  await sagaLog(
    ctx,
    `Discovery: ${environment.programType}; ${environment.commands.length} commands checked`,
  );

  /** decisions.md (newest first): the defaults adopted by [D], then the planner's own decisions with citations. */
  const recordAutonomousDecisions = async () => {
    for (const entry of autonomousDecisionEntries(decisions, defaultsAdopted, new Date().toISOString()))
      await quick.prependDecision({ sagaDir: ctx.sagaDir, entry });
  };

  /** From earlier sagas' costs in this saga home (SAGA.md shows it too); null when there are none. */
  let costEstimate: string | null = null;
  /** The spec tree; in autonomous mode SAGA.md carries the seed 001 rationale block. */
  const writeSpecTree = async (p: Plan) => {
    const written = await quick.writeSpecTree({
      sagaDir: ctx.sagaDir,
      name: ctx.name,
      plan: ctx.flags.autonomous
        ? {
            ...p,
            rationale: [
              ...(p.rationale ?? []),
              ...rationaleBullets(p.rationale?.length ? [] : decisions, defaultsAdopted),
            ],
          }
        : p,
      environment,
      flags: ctx.flags,
      askedBack,
    });
    costEstimate = written.costEstimate ?? null;
  };

  let problem = ctx.goal;
  const answers: { question: string; answer: string; text?: string }[] = [];
  const decisions: PlannerDecision[] = [];
  let asked = 0;
  /** Autonomous until every substantive decision needs asking (seed 001: then interactive elicitation). */
  let autonomous = ctx.flags.autonomous;
  const substantive = { askedSubstantive: 0, decidedSubstantive: 0 };
  /** Autonomous mode: questions put to the user, and the defaults adopted when the user picked [D]. */
  const askedBack: string[] = [];
  const defaultsAdopted: AdoptedDefault[] = [];

  if (!givenPlan) {
    // Seed 001 pre-flight: the autonomous planner decides from conventions, principles and prior decisions.
    const preflight = ctx.flags.autonomous
      ? await quick.gatherPlanningContext({
          repo: ctx.repo,
          sagaDir: ctx.sagaDir,
          sagaWorkflowId: sagaWorkflowId(ctx.name),
        })
      : null;
    // Close ambiguity: rounds of questions until the planner has none left.
    for (let round = 1; round <= 10; round++) {
      setCurrentDetails(`Planner: questions, round ${round}`);
      const out = await planner(
        'questions',
        {
          round,
          answers,
          autonomous,
          environment,
          ...(preflight ? { preflight } : {}),
        },
        (raw) => {
          const parsed = PlannerQuestionsOutputSchema.safeParse(raw);
          return parsed.success
            ? { ok: true, value: parsed.data }
            : { ok: false, errors: zodErrors(parsed.error) };
        },
      );
      if (!out) return { approved: false, plan: null, environment, problem, versions: 0 };
      if (out.problem) problem = out.problem;
      // Seed 003 step 1: the planner's restatement, read by the user before the first question.
      const restatement = round === 1 ? await recordRestatement(ctx, out) : null;
      const questions: PlannerQuestion[] = [...out.questions];
      if (ctx.flags.autonomous) {
        // A planner may repeat earlier decisions each round: only new ones count (and are asked once).
        const known = new Set([...decisions.map((d) => d.question), ...answers.map((a) => a.question)]);
        const unconfident: PlannerDecision[] = [];
        const fresh = out.decisions.filter((x) => !known.has(x.question));
        for (const d of await resolveConflicts(ctx, scratch, fresh)) {
          known.add(d.question);
          if (!d.confident && d.substantive) unconfident.push(d);
          else {
            decisions.push(d);
            if (d.substantive) substantive.decidedSubstantive++;
          }
        }
        substantive.askedSubstantive +=
          out.questions.filter((q) => q.substantive).length + unconfident.length;
        if (autonomous && autonomyInsufficient(substantive)) {
          autonomous = false;
          await sagaLog(ctx, AUTONOMY_INSUFFICIENT_NOTE);
          await quick.prependDecision({
            sagaDir: ctx.sagaDir,
            entry: {
              at: new Date().toISOString(),
              title: AUTONOMY_INSUFFICIENT_NOTE,
              lines: [
                `- All ${substantive.askedSubstantive} substantive decision(s) of round ${round} needed asking; ` +
                  'none could be decided from memory, codebase, principles or prior decisions.',
                '- The questions are asked as in interactive mode (no [D] default); the final approval is yours as always.',
              ],
            },
          });
        }
        for (const d of unconfident) {
          // Seed 001: unconfident + substantive is asked back (an exception checkpoint, never auto-picked).
          questions.push(askedBackQuestion(d, questions.length + 1, autonomous));
        }
      }
      if (questions.length === 0) break;
      for (const [b, batch] of batches(questions).entries()) {
        const requests = batch.map((q) => questionInteraction(round, q, autonomous));
        if (restatement && b === 0)
          requests[0] = { ...requests[0]!, prompt: withRestatement(requests[0]!.prompt, restatement) };
        const replies: Answer[] = await askAll(ctx.sagaWorkflowId, requests);
        asked += batch.length;
        batch.forEach((q, i) => {
          const reply = replies[i]!;
          let answer = reply.choice;
          if (ctx.flags.autonomous) askedBack.push(q.text);
          if (reply.choice === '[D] default') {
            // [D]: the planner's best guess stands, documented as a project decision.
            answer = q.options[q.recommended ?? 0]!;
            defaultsAdopted.push({ question: q.text, choice: answer });
          }
          answers.push({ question: q.text, answer, ...(reply.text ? { text: reply.text } : {}) });
        });
      }
    }
    // Seed 001 memory: this saga's decisions inform the repo's next sagas (their planner cites them).
    const remembered = memoryEntries(ctx.name, decisions, answers, defaultsAdopted, new Date().toISOString());
    if (remembered.length) {
      await quick.rememberDecisions({ repo: ctx.repo, entries: remembered });
    }
    if (ctx.flags.autonomous) {
      await recordAutonomousDecisions();
      await quick.updateManifest({
        sagaDir: ctx.sagaDir,
        patch: {
          autonomous_decisions: [
            { phase: 'planning', decided: decisions.length, asked, sources: countSources(decisions) },
          ],
        },
        append: true,
      });
    }
  }

  const draftContext = { problem, answers, decisions, environment, autonomous };
  const first: Plan | null = givenPlan ?? (await draftPlan(ctx, planner, draftContext));
  if (!first) return { approved: false, plan: null, environment, problem, versions: 0 };
  let plan: Plan = first;
  /** `saga status` shows the plan under review and what became of it. */
  const planEvent = (version: number, state: PlanSummary['state']): ProgressEvent => ({
    type: 'plan',
    summary: summarizePlan(plan, { version, state, specPath: `${ctx.sagaDir}/SAGA.md` }),
  });
  const publish = (version: number, state: PlanSummary['state']) => report(ctx, planEvent(version, state));

  for (let version = 1; ; version++) {
    await writeSpecTree(plan);
    /** An escalated or forced review is said at the approval, which then recommends nothing. */
    let reviewNote = reviewedApproval('pass');
    if (ctx.flags.quality_locked) {
      // Each iteration reviews, and revises, the latest version of the plan.
      const reviewed = await reviewLoop(ctx, {
        phase: 'planning',
        checkpoint: 'plan-approval',
        subject: 'plan',
        taskId: 'plan',
        workdir: scratch,
        context: () => ({ plan }),
        revise: async (findings, iteration) => {
          const current: Plan = plan;
          return (
            (await planner(
              'revise',
              { plan: current, note: findings, version: `${version}-r${iteration}` },
              validatePlanned,
            )) ?? current
          );
        },
        // The checkpoint's [R] revises with the user's note; [N] has a fresh planner session draft it again.
        reviseWithNote: async (note, n) =>
          (await planner('revise', { plan, note, version: `${version}-c${n}` }, validatePlanned)) ?? plan,
        ...(givenPlan
          ? {}
          : {
              newSession: async (n: number) =>
                (await draftPlan(ctx, planner, { ...draftContext, version: `${version}-n${n}` })) ?? plan,
            }),
        onRevised: async (next) => {
          plan = next;
          await writeSpecTree(next);
        },
      });
      // A revision stopped at the budget leaves the plan unrevised: the saga ends, it is not approved.
      if (reviewed === 'abort' || budgetStopped())
        return { approved: false, plan, environment, problem, versions: version };
      reviewNote = reviewedApproval(reviewed);
    }
    await publish(version, 'awaiting-approval');
    setCurrentDetails('Waiting for plan approval');
    // Autonomous decisions are listed so the user can correct one by number (seed 001 [LRN:correction]).
    const correctable: CorrectableDecision[] = ctx.flags.autonomous
      ? correctableDecisions(decisions, defaultsAdopted)
      : [];
    const answer = await ask(ctx.sagaWorkflowId, {
      id: `plan-approval-${version}`,
      kind: 'plan-approval',
      prompt: [
        `Approve the plan (version ${version}) written to ${ctx.sagaDir}/SAGA.md?`,
        ...(reviewNote.note ? [reviewNote.note] : []),
        ...(costEstimate ? [costEstimate] : []),
        ...correctableDecisionLines(correctable),
      ].join('\n'),
      options: ['approve', 'revise', 'reject'],
      recommended: reviewNote.recommended,
      textRequiredFor: ['revise'],
    });
    if (answer.choice === 'approve') {
      closing.push(planEvent(version, 'approved'), {
        type: 'log',
        line: `Plan version ${version} approved by ${answer.user}`,
      });
      // Acceptance lists them too: a correction there is a learning as well (seed 001).
      const corrections = correctable.length ? { decisions: correctable } : {};
      return { approved: true, plan, environment, problem, versions: version, ...corrections };
    }
    if (answer.choice === 'reject') {
      closing.push(planEvent(version, 'rejected'), { type: 'log', line: `Plan rejected by ${answer.user}` });
      return { approved: false, plan, environment, problem, versions: version };
    }
    await publish(version, 'revising');
    await sagaLog(ctx, `Revision requested by ${answer.user}: ${answer.text ?? ''}`);
    const { corrections, unknown } = correctable.length
      ? parseDecisionCorrections(answer.text ?? '', correctable)
      : { corrections: [], unknown: [] };
    if (corrections.length || unknown.length) {
      if (unknown.length)
        await sagaLog(
          ctx,
          `Revise note names no listed autonomous decision: ${unknown.join(', ')} (ignored)`,
        );
      if (corrections.length) {
        // Seed 001: a user correcting an autonomous decision is a learning for the repo's next sagas.
        await quick.recordCorrections({
          repo: ctx.repo,
          saga: ctx.name,
          sagaDir: ctx.sagaDir,
          user: answer.user,
          corrections,
        });
        await sagaLog(
          ctx,
          `[LRN:correction] ${corrections.map((c) => `D${c.number} ${c.decision.question} → ${c.correction}`).join('; ')}`,
        );
        applyCorrections(corrections, decisions, defaultsAdopted);
      }
    }
    const revised: Plan | null = await planner(
      'revise',
      {
        plan,
        note: answer.text,
        version: version + 1,
        problem,
        ...(corrections.length ? { corrections } : {}),
      },
      validatePlanned,
    );
    if (!revised) return { approved: false, plan, environment, problem, versions: version };
    plan = revised;
  }
}
