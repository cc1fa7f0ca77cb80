/**
 * Closing ambiguity (docs/PROCEDURE.md §2.4): rounds of planner questions until it has none left. In
 * autonomous mode the planner decides what it can from conventions, principles and prior decisions; what
 * it is not confident of is asked back, and the decisions are remembered for the repo's next sagas.
 */
import { setCurrentDetails } from '@temporalio/workflow';
import { askedBackQuestion, countSources, memoryEntries } from '../../domain/planning/autonomous-decisions';
import {
  autonomyInsufficientEntry,
  freshDecisions,
  replyToQuestion,
  triageDecisions,
} from '../../domain/planning/elicitation';
import {
  AUTONOMY_INSUFFICIENT_NOTE,
  autonomyInsufficient,
  batches,
  PlannerQuestionsOutputSchema,
  questionInteraction,
  zodErrors,
  type PlannerDecision,
  type PlannerQuestion,
  type PlannerQuestionsOutput,
} from '../../domain/planning/planner';
import { withRestatement } from '../../domain/request/intake';
import { sagaWorkflowId } from '../../domain/contract/naming';
import { askAll } from '../ask';
import type { Validation } from './planner-runs';
import { recordRestatement, resolveConflicts } from './planning-steps';
import type { PlanningSession } from './planning-session';
import { sagaLog } from '../shared';

/** Rounds of questions at most. */
const MAX_QUESTION_ROUNDS = 10;

const validateQuestions = (raw: unknown): Validation<PlannerQuestionsOutput> => {
  const parsed = PlannerQuestionsOutputSchema.safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, errors: zodErrors(parsed.error) };
};

/** The question loop, then the decisions recorded; false when a planner run was stopped (budget, abort). */
export async function closeAmbiguity(session: PlanningSession): Promise<boolean> {
  const { ctx, quick } = session;
  // The autonomous planner's pre-flight: the conventions, principles and prior decisions it decides from.
  const preflight = ctx.flags.autonomous
    ? await quick.gatherPlanningContext({
        repo: ctx.repo,
        sagaDir: ctx.sagaDir,
        sagaWorkflowId: sagaWorkflowId(ctx.name),
      })
    : null;
  for (let round = 1; round <= MAX_QUESTION_ROUNDS; round++) {
    setCurrentDetails(`Planner: questions, round ${round}`);
    const out = await session.planner(
      'questions',
      {
        round,
        answers: session.answers,
        autonomous: session.autonomous,
        environment: session.environment,
        ...(preflight ? { preflight } : {}),
      },
      validateQuestions,
    );
    if (!out) return false;
    if (out.problem) session.problem = out.problem;
    // The planner's restatement, read by the user before the first question.
    const restatement = round === 1 ? await recordRestatement(ctx, out) : null;
    const questions: PlannerQuestion[] = [...out.questions];
    if (ctx.flags.autonomous)
      for (const d of await decide(session, out, round))
        questions.push(askedBackQuestion(d, questions.length + 1, session.autonomous));
    if (questions.length === 0) break;
    await askQuestions(session, round, questions, restatement);
  }
  await recordDecisions(session);
  return true;
}

/**
 * Autonomous mode: the round's new decisions taken (memory and codebase conflicts resolved first); the
 * unconfident substantive ones are returned, to be asked back. When every substantive decision needed
 * asking, planning goes on as in interactive mode.
 */
async function decide(
  session: PlanningSession,
  out: PlannerQuestionsOutput,
  round: number,
): Promise<PlannerDecision[]> {
  const { ctx, substantive } = session;
  const fresh = freshDecisions(out.decisions, session.decisions, session.answers);
  const { decided, unconfident } = triageDecisions(await resolveConflicts(ctx, session.scratch, fresh));
  session.decisions.push(...decided);
  substantive.decidedSubstantive += decided.filter((d) => d.substantive).length;
  substantive.askedSubstantive += out.questions.filter((q) => q.substantive).length + unconfident.length;
  if (session.autonomous && autonomyInsufficient(substantive)) {
    session.autonomous = false;
    await sagaLog(ctx, AUTONOMY_INSUFFICIENT_NOTE);
    await session.quick.prependDecision({
      sagaDir: ctx.sagaDir,
      entry: autonomyInsufficientEntry(substantive.askedSubstantive, round, new Date().toISOString()),
    });
  }
  return unconfident;
}

/** The questions in batches (each batch open at once); the first carries the planner's restatement. */
async function askQuestions(
  session: PlanningSession,
  round: number,
  questions: PlannerQuestion[],
  restatement: string[] | null,
): Promise<void> {
  const { ctx } = session;
  for (const [b, batch] of batches(questions).entries()) {
    const requests = batch.map((q) => questionInteraction(round, q, session.autonomous));
    if (restatement && b === 0)
      requests[0] = { ...requests[0]!, prompt: withRestatement(requests[0]!.prompt, restatement) };
    const replies = await askAll(ctx.sagaWorkflowId, requests);
    session.asked += batch.length;
    batch.forEach((q, i) => {
      if (ctx.flags.autonomous) session.askedBack.push(q.text);
      // [D]: the planner's best guess stands, documented as a project decision.
      const { answer, adopted } = replyToQuestion(q, replies[i]!);
      if (adopted) session.defaultsAdopted.push(adopted);
      session.answers.push(answer);
    });
  }
}

/** This saga's decisions inform the repo's next sagas (their planner cites them); autonomous ones go to decisions.md and the manifest. */
async function recordDecisions(session: PlanningSession): Promise<void> {
  const { ctx, quick, decisions } = session;
  const at = new Date().toISOString();
  const remembered = memoryEntries(ctx.name, decisions, session.answers, session.defaultsAdopted, at);
  if (remembered.length) await quick.rememberDecisions({ repo: ctx.repo, entries: remembered });
  if (!ctx.flags.autonomous) return;
  await session.recordAutonomousDecisions();
  await quick.updateManifest({
    sagaDir: ctx.sagaDir,
    patch: {
      autonomous_decisions: [
        {
          phase: 'planning',
          decided: decisions.length,
          asked: session.asked,
          sources: countSources(decisions),
        },
      ],
    },
    append: true,
  });
}
