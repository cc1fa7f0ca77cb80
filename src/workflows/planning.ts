/**
 * Phase 1 (Saga procedure steps 2-6): discovery, closing ambiguity with the planner, exit criteria and
 * decomposition, the spec tree on disk, and the approval gate. Intake (name confirmation) happens in the
 * saga workflow before this phase, so nothing is created on disk before the user confirms.
 */
import { CancellationScope, log, patched, setCurrentDetails } from '@temporalio/workflow';
import { budgetInteraction, raisedLimit, remainingUsd, runCapUsd } from '../domain/budget';
import type { Environment } from '../domain/environment';
import { validatePlan, type Plan } from '../domain/plan';
import {
  correctableDecisionLines,
  DECISION_TAG,
  parseDecisionCorrections,
  type CorrectableDecision,
  type MemoryEntry,
} from '../domain/memory';
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
} from '../domain/planner';
import type { SagaContext } from '../domain/saga-input';
import type { Answer, PlanSummary, Usage } from '../domain/state';
import { addUsage, noUsage } from '../domain/usage';
import { longActivities, quickActivities } from './activities';
import { ask, askAll } from './ask';
import { reviewLoop } from './review-loop';
import { planningWorktree, plannerProfile, report, sagaLog } from './shared';

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
}

/** The saga budget as planning sees it: its limit (raised by answers) and the planner runs' spend. */
interface PlanningSpend {
  usage: Usage;
  sagaBudgetUsd: number | null;
}

const MAX_INVALID_OUTPUTS = 3;

/** Marks planning runs that add their decisions to the repository's memory of sagas (seed 001). */
export const REPO_MEMORY_PATCH = 'planner-repo-memory';
/** Marks planning runs that record `D<n>:` corrections of autonomous decisions as `[LRN:correction]`. */
export const CORRECTIONS_PATCH = 'autonomous-decision-corrections';
/** Marks planning runs that degrade to interactive elicitation when every substantive decision is asked. */
export const AUTONOMY_DEGRADE_PATCH = 'autonomous-degrade-to-elicitation';
/**
 * Marks planning runs whose planner runs are gated by the saga budget: a run that would start at or over it
 * asks the `budget` question first (raise / stop), and each gets what is left as its cap.
 */
export const PLANNER_BUDGET_PATCH = 'planner-budget-gate';

export async function planningWorkflow(input: PlanningInput): Promise<PlanningResult> {
  const { ctx } = input;
  const scratch = planningWorktree(ctx);
  const spend: PlanningSpend = { usage: noUsage(), sagaBudgetUsd: ctx.settings.budget.sagaUsd };
  try {
    const result = await runPlanning(input, scratch, spend);
    return { ...result, usage: spend.usage, sagaBudgetUsd: spend.sagaBudgetUsd };
  } finally {
    // Histories recorded before the scratch worktree existed have no such step; they replay without it.
    if (patched('planning-scratch-worktree')) {
      const quick = quickActivities(ctx.hostQueue);
      const finished = await CancellationScope.nonCancellable(() =>
        quick.finishPlanningWorktree({ repo: ctx.repo, worktree: scratch, sagaDir: ctx.sagaDir }),
      );
      await sagaLog(
        ctx,
        finished.checkoutUnchanged === false
          ? `Warning: the main checkout changed during planning: ${finished.differences.join('; ')}`
          : `Planning worktree ${finished.removed ? 'removed' : 'already gone'}; main checkout unchanged`,
      );
    }
  }
}

async function runPlanning(
  { ctx, plan: givenPlan }: PlanningInput,
  scratch: string,
  spend: PlanningSpend,
): Promise<PlanningResult> {
  const quick = quickActivities(ctx.hostQueue);
  const long = longActivities(ctx.hostQueue, 60 * 60_000);
  const budgetGate = patched(PLANNER_BUDGET_PATCH);
  let budgetQuestions = 0;
  /** The user answered a budget question with stop: no planner run starts any more. */
  let budgetStopped = false;

  /**
   * The saga budget's gate before a planner run: asks (raise / stop) while planning has spent it all; the
   * cap for the run (null: no budget), or 'stop' when the user stopped the saga.
   */
  async function plannerBudget(): Promise<number | null | 'stop'> {
    for (;;) {
      if (budgetStopped) return 'stop';
      const limit = spend.sagaBudgetUsd;
      const spent = spend.usage.costUsd;
      if (limit === null) return null;
      if (spent < limit) return runCapUsd(remainingUsd(limit, spent));
      setCurrentDetails('Waiting for a budget answer before the next planner run');
      const question = budgetInteraction(
        `budget-planning-${Math.round(spent * 100)}-of-${Math.round(limit * 100)}-q${++budgetQuestions}`,
        spent,
        limit,
        ctx.settings.budget.onExhausted ?? 'finish',
      );
      const answer = await ask(ctx.sagaWorkflowId, question);
      await sagaLog(
        ctx,
        `Budget question answered by ${answer.user}: ${answer.choice}${answer.text ? ` ${answer.text}` : ''}`,
      );
      if (answer.choice === 'stop') {
        await sagaLog(ctx, 'Planning stopped at the saga budget');
        budgetStopped = true;
        return 'stop';
      }
      try {
        spend.sagaBudgetUsd = raisedLimit(answer.text ?? '', limit);
        await sagaLog(ctx, `Saga budget is now $${spend.sagaBudgetUsd}`);
      } catch {
        // Refused by the respond validator; asked again.
      }
    }
  }

  setCurrentDetails('Discovering the environment of the target repo');
  const environment = await long.discoverEnvironment({
    repo: ctx.repo,
    sagaDir: ctx.sagaDir,
    timeoutMs: 5 * 60_000,
    worktree: scratch,
    base: ctx.base,
  });
  await sagaLog(
    ctx,
    `Discovery: ${environment.programType}; ${environment.commands.length} commands checked`,
  );

  /** Runs the planner at a stage and validates its answer; invalid answers are retried with the errors. */
  async function planner<T>(
    stage: string,
    context: Record<string, unknown>,
    validate: (raw: unknown) => { ok: true; value: T } | { ok: false; errors: string[] },
  ): Promise<T | null> {
    let errors: string[] = [];
    for (let round = 1; ; round++) {
      for (let attempt = 1; attempt <= MAX_INVALID_OUTPUTS; attempt++) {
        const cap = budgetGate ? await plannerBudget() : null;
        if (cap === 'stop') return null;
        const run = await long.runRoleAgent({
          template: `planner-${stage === 'revise' ? 'revise' : stage}`,
          sagaName: ctx.name,
          sagaDir: ctx.sagaDir,
          role: 'planner',
          stage,
          taskId: 'plan',
          attempt,
          profile: plannerProfile(ctx),
          workdir: scratch,
          context: { ...context, goal: ctx.goal, stage, previousErrors: errors },
          // Earlier sagas' decisions and learnings of this repo, read into the prompt with their citations.
          memory: { repo: ctx.repo },
          attachments: [],
          runLabel: `planner-${stage}-${String(context.round ?? context.version ?? 1)}-${round}-a${attempt}`,
          ...(cap !== null ? { maxBudgetUsd: cap } : {}),
        });
        spend.usage = addUsage(spend.usage, run.usage);
        const raw = run.report ?? null;
        const checked =
          raw === null
            ? { ok: false as const, errors: [run.reportError ?? 'no JSON answer'] }
            : validate(raw);
        if (checked.ok) return checked.value;
        errors = checked.errors;
        log.warn('Planner output invalid', { stage, attempt, errors });
      }
      const answer = await ask(ctx.sagaWorkflowId, {
        id: `planner-invalid-${stage}-${String(context.round ?? context.version ?? 1)}-${round}`,
        kind: 'question',
        prompt:
          `The planner gave an invalid answer ${MAX_INVALID_OUTPUTS} times at stage '${stage}':\n- ` +
          errors.slice(0, 10).join('\n- '),
        options: ['retry', 'abort'],
        recommended: 0,
      });
      if (answer.choice === 'abort') return null;
    }
  }

  /** decisions.md (newest first): the defaults adopted by [D], then the planner's own decisions with citations. */
  async function recordAutonomousDecisions(
    decided: PlannerDecision[],
    defaults: { question: string; choice: string }[],
  ): Promise<void> {
    const at = new Date().toISOString();
    if (decided.length) {
      await quick.prependDecision({
        sagaDir: ctx.sagaDir,
        entry: {
          at,
          title: `Autonomous decisions (planning): ${decided.length} decided`,
          lines: decided.map(
            (d) =>
              `- ${d.question}: ${d.choice} — ${d.citation}${d.confident ? '' : ' (unconfident, cosmetic: default documented)'}`,
          ),
        },
      });
    }
    if (defaults.length) {
      await quick.prependDecision({
        sagaDir: ctx.sagaDir,
        entry: {
          at,
          title: `Defaults adopted ([D]) for ${defaults.length} question(s) asked back`,
          lines: defaults.map(
            (d) => `- ${d.question}: ${d.choice} — default — no signal; the user picked [D]`,
          ),
        },
      });
    }
  }

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
  const defaultsAdopted: { question: string; choice: string }[] = [];

  if (!givenPlan) {
    // Seed 001 pre-flight: the autonomous planner decides from conventions, principles and prior decisions.
    const preflight = ctx.flags.autonomous
      ? await quick.gatherPlanningContext({ repo: ctx.repo, sagaDir: ctx.sagaDir })
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
      const questions: PlannerQuestion[] = [...out.questions];
      if (ctx.flags.autonomous) {
        // A planner may repeat earlier decisions each round: only new ones count (and are asked once).
        const known = new Set([...decisions.map((d) => d.question), ...answers.map((a) => a.question)]);
        const unconfident: PlannerDecision[] = [];
        for (const d of out.decisions.filter((x) => !known.has(x.question))) {
          known.add(d.question);
          if (!d.confident && d.substantive) unconfident.push(d);
          else {
            decisions.push(d);
            if (d.substantive) substantive.decidedSubstantive++;
          }
        }
        substantive.askedSubstantive +=
          out.questions.filter((q) => q.substantive).length + unconfident.length;
        if (autonomous && autonomyInsufficient(substantive) && patched(AUTONOMY_DEGRADE_PATCH)) {
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
          questions.push({
            id: `d${questions.length + 1}`,
            text: d.question,
            options: [d.choice, 'Something else (say which with --text)'],
            recommended: 0,
            substantive: true,
            why: autonomous
              ? `--autonomous could not decide this confidently (${d.citation}); it is substantive, so ` +
                `it is yours to answer. [D] default adopts "${d.choice}" and records it in decisions.md.`
              : `no signal to decide this (${d.citation}); it is substantive, so it is yours to answer.`,
          });
        }
      }
      if (questions.length === 0) break;
      for (const batch of batches(questions)) {
        const replies: Answer[] = await askAll(
          ctx.sagaWorkflowId,
          batch.map((q) => questionInteraction(round, q, autonomous)),
        );
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
    const remembered = memoryEntries(ctx.name, decisions, answers, defaultsAdopted);
    if (remembered.length && patched(REPO_MEMORY_PATCH)) {
      await quick.rememberDecisions({ repo: ctx.repo, entries: remembered });
    }
    if (ctx.flags.autonomous) {
      await recordAutonomousDecisions(decisions, defaultsAdopted);
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

  const validatePlanned = (raw: unknown) => {
    const result = validatePlan(raw, 'planner output');
    return result.ok
      ? { ok: true as const, value: result.plan }
      : { ok: false as const, errors: result.errors };
  };

  const first: Plan | null =
    givenPlan ??
    (await planner('plan', { problem, answers, decisions, environment, autonomous }, validatePlanned));
  if (!first) return { approved: false, plan: null, environment, problem, versions: 0 };
  let plan: Plan = first;
  /** `saga status` shows the plan under review and what became of it. */
  const publish = (version: number, state: PlanSummary['state']) =>
    report(ctx, {
      type: 'plan',
      summary: summarizePlan(plan, { version, state, specPath: `${ctx.sagaDir}/SAGA.md` }),
    });

  for (let version = 1; ; version++) {
    await writeSpecTree(plan);
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
        onRevised: async (next) => {
          plan = next;
          await writeSpecTree(next);
        },
      });
      // A revision stopped at the budget leaves the plan unrevised: the saga ends, it is not approved.
      if (reviewed === 'abort' || budgetStopped)
        return { approved: false, plan, environment, problem, versions: version };
    }
    await publish(version, 'awaiting-approval');
    setCurrentDetails('Waiting for plan approval');
    // Autonomous decisions are listed so the user can correct one by number (seed 001 [LRN:correction]).
    const correctable: CorrectableDecision[] = ctx.flags.autonomous
      ? [
          ...decisions.map(({ question, choice, citation }) => ({ question, choice, citation })),
          ...defaultsAdopted.map(({ question, choice }) => ({
            question,
            choice,
            citation: 'default — no signal ([D] picked by the user)',
          })),
        ]
      : [];
    const answer = await ask(ctx.sagaWorkflowId, {
      id: `plan-approval-${version}`,
      kind: 'plan-approval',
      prompt: [
        `Approve the plan (version ${version}) written to ${ctx.sagaDir}/SAGA.md?`,
        ...(costEstimate ? [costEstimate] : []),
        ...correctableDecisionLines(correctable),
      ].join('\n'),
      options: ['approve', 'revise', 'reject'],
      recommended: 0,
      textRequiredFor: ['revise'],
    });
    if (answer.choice === 'approve') {
      await publish(version, 'approved');
      await sagaLog(ctx, `Plan version ${version} approved by ${answer.user}`);
      return { approved: true, plan, environment, problem, versions: version };
    }
    if (answer.choice === 'reject') {
      await publish(version, 'rejected');
      await sagaLog(ctx, `Plan rejected by ${answer.user}`);
      return { approved: false, plan, environment, problem, versions: version };
    }
    await publish(version, 'revising');
    await sagaLog(ctx, `Revision requested by ${answer.user}: ${answer.text ?? ''}`);
    const { corrections, unknown } = correctable.length
      ? parseDecisionCorrections(answer.text ?? '', correctable)
      : { corrections: [], unknown: [] };
    if ((corrections.length || unknown.length) && patched(CORRECTIONS_PATCH)) {
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

/** Seed 001 rationale bullets: `**label:** choice — citation`, the [D] defaults marked as such. */
function rationaleBullets(
  decisions: PlannerDecision[],
  defaults: { question: string; choice: string }[],
): string[] {
  return [
    ...decisions.map((d) => `**${d.question}:** ${d.choice} — ${d.citation}`),
    ...defaults.map((d) => `**${d.question}:** ${d.choice} — default — no signal ([D] picked by the user)`),
  ];
}

/** A corrected decision stands as the user said (the rationale block and later approvals show it so). */
function applyCorrections(
  corrections: ReturnType<typeof parseDecisionCorrections>['corrections'],
  decisions: PlannerDecision[],
  defaults: { question: string; choice: string }[],
): void {
  for (const c of corrections) {
    const i = c.number - 1;
    const citation = `the user's correction (D${c.number}, [LRN:correction] in decisions.md)`;
    if (i < decisions.length)
      decisions[i] = { ...decisions[i]!, choice: c.correction, citation, confident: true };
    else if (defaults[i - decisions.length]) defaults[i - decisions.length]!.choice = c.correction;
  }
}

/** This saga's planning decisions as memory entries: the planner's own (with citations) and the user's answers. */
function memoryEntries(
  saga: string,
  decisions: PlannerDecision[],
  answers: { question: string; answer: string; text?: string }[],
  defaults: { question: string; choice: string }[],
): MemoryEntry[] {
  const at = new Date().toISOString();
  const adopted = new Set(defaults.map((d) => d.question));
  const entry = (subject: string, text: string): MemoryEntry => ({
    at,
    tag: DECISION_TAG,
    subject,
    text,
    saga,
    file: 'decisions.md',
  });
  return [
    ...decisions.map((d) => entry(d.question, `${d.choice} — decided autonomously (${d.citation})`)),
    ...answers.map((a) =>
      entry(
        a.question,
        `${a.answer}${a.text ? ` (${a.text})` : ''} — ${adopted.has(a.question) ? 'default adopted by the user ([D])' : 'answered by the user'}`,
      ),
    ),
  ];
}

function countSources(decisions: PlannerDecision[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const d of decisions) {
    const key = /memory/i.test(d.citation)
      ? 'memory'
      : /codebase|pattern/i.test(d.citation)
        ? 'codebase'
        : /principle|constitution/i.test(d.citation)
          ? 'principle'
          : /prior|decision/i.test(d.citation)
            ? 'prior'
            : 'default';
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
