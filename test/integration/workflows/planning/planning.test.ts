/**
 * Planning (docs/PROCEDURE.md §2) end to end against the real server, real git and the demo agent as the planner (a real process
 * answering from the repo's `.saga/demo-script.json`): intake, discovery, question rounds in batches,
 * decomposition, a revise, approval, and every bad input refused without moving the saga.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { renderStatus } from '../../../../src/client/commands/inspect';
import { UserError } from '../../../../src/client/errors';
import { respond } from '../../../../src/client/saga-client';
import { createSampleRepo, greetingPlan, GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { phaseWorkflowId, sagaWorkflowId } from '../../../../src/domain/contract/naming';
import {
  batches,
  PlannerQuestionsOutputSchema,
  summarizePlan,
  zodErrors,
} from '../../../../src/domain/planning/planner';
import { validatePlan } from '../../../../src/domain/plan';
import type { RespondInput, SagaStatus } from '../../../../src/domain/contract/state';
import { recordHistory } from '../../../harness/histories';
import { WORKFLOW_BUNDLE } from '../../../harness/server';
import {
  createSagaTestEnv,
  sagaStatus,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

const question = (id: string, options: string[], recommended = 0) => ({
  id,
  text: `Question ${id}?`,
  options,
  recommended,
  substantive: true,
  why: `${id} matters`,
});

/** Round 1 has six questions (asked as 4 then 2), round 2 one, then the planner has none. */
const ROUND_1 = [
  question('style', ['Hello, NAME!', 'Hello NAME']),
  question('default', ['Hello, world!', 'an error']),
  question('scope', ['library only', 'library and CLI'], 1),
  question('errors', ['throw', 'return empty']),
  question('docs', ['README', 'none']),
  question('Tests', ['node:test', 'jest']),
];
const ROUND_2 = [question('cli', ['stdout', 'stderr'])];

/** The revised plan drops the CLI milestone and its exit criterion. */
function revisedPlan(): Record<string, unknown> {
  const plan = greetingPlan() as { milestones: unknown[]; exit_criteria: unknown[] };
  return {
    ...plan,
    problem: 'Add greet(name) to the sample library; the CLI is left for later.',
    exit_criteria: plan.exit_criteria.slice(0, 1),
    milestones: plan.milestones.slice(0, 1),
  };
}

const pendingIds = (s: SagaStatus) => s.pending.map((p) => p.id).sort();

describe('planning phase (docs/PROCEDURE.md §2 as a workflow)', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('planning');
    process.env.SAGA_HOME = env.sagaHome;
    process.env.SAGA_HOST_ID = env.hostId;
    process.env.SAGA_TASK_QUEUE = env.taskQueue;
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  const answer = (name: string, interactionId: string, choice: string, text?: string) =>
    respond(env.client, name, { interactionId, choice, user: 'tester', ...(text ? { text } : {}) });

  /** A refused answer names the problem and leaves phase, pending interactions and plan as they were. */
  async function expectRefused(name: string, input: RespondInput, type: string, message: RegExp) {
    const before = await sagaStatus(env, name);
    const refusal = await respond(env.client, name, input).then(
      () => null,
      (error: unknown) => error as { type?: string; message: string },
    );
    expect(refusal).toMatchObject({ type });
    expect(refusal!.message).toMatch(message);
    const after = await sagaStatus(env, name);
    expect(after.phase).toBe(before.phase);
    expect(pendingIds(after)).toEqual(pendingIds(before));
    expect(after.planSummary).toEqual(before.planSummary);
  }

  async function start(repo: string, options: { plan?: string; name?: string; now?: Date } = {}) {
    const input = await prepareSaga(
      {
        repo,
        argumentsText: 'Add a greeting',
        ...(options.plan ? { plan: options.plan } : {}),
        ...(options.name ? { name: options.name } : {}),
      },
      options.now,
    );
    await startSaga(env.client, input);
    return input;
  }

  test('intake → discovery → two question rounds → plan → revise → approval → implementation', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      script: {
        planner: {
          problem: 'The sample library cannot greet anyone yet.',
          questions: [ROUND_1, ROUND_2],
          plan: greetingPlan(),
          revise: revisedPlan(),
        },
      },
    });
    // Intake: the proposed name is <feature-slug>-<YYYYMMDD-HHMM> (UTC) when no --name is given.
    const input = await start(repo, { now: new Date(Date.UTC(2030, 0, 2, 3, 4)) });
    const name = input.name;
    expect(name).toBe('add-a-greeting-20300102-0304');
    const sagaDir = input.sagaDir;

    const intake = await waitForPending(env, name, 'confirm-name');
    expect(intake.phase).toBe('planning');
    expect(intake.pending[0]).toMatchObject({ kind: 'confirm-name', options: ['confirm', 'cancel'] });
    expect(intake.pending[0]!.prompt).toContain(name);
    expect(intake.pending[0]!.prompt).toContain('Add a greeting');
    expect(intake.planSummary ?? null).toBeNull();
    expect(existsSync(sagaDir)).toBe(false); // nothing on disk before the name is confirmed
    await answer(name, 'confirm-name', '1'); // by number

    // Round 1, batch 1: exactly four questions are open at once, and they show together (one signal).
    const batch1 = await waitForStatus(env, name, (s) => s.pending.length > 0);
    expect(pendingIds(batch1)).toEqual(['q1-default', 'q1-errors', 'q1-scope', 'q1-style']);
    const scope = batch1.pending.find((p) => p.id === 'q1-scope')!;
    expect(scope).toMatchObject({ kind: 'question', options: ['library only', 'library and CLI'] });
    expect(scope.recommended).toBe(1);
    expect(scope.prompt).toContain('scope matters');
    // Discovery ran before the planner, and the manifest (flags) exists before any artifact work.
    expect(readFileSync(path.join(sagaDir, 'manifest.md'), 'utf8')).toMatch(/quality_locked/);
    expect(existsSync(path.join(sagaDir, 'runs', 'planner-questions-1-1-a1', 'prompt.md'))).toBe(true);

    expect((await answer(name, 'q1-style', 'hello name')).choice).toBe('Hello NAME'); // option text, any case
    expect((await answer(name, 'q1-default', '1')).choice).toBe('Hello, world!'); // by number
    await answer(name, 'q1-scope', 'library only', 'The CLI can wait.');
    // The batch is asked as a whole: the fifth question waits until all four are answered.
    expect(pendingIds(await sagaStatus(env, name))).toEqual(['q1-errors']);
    await answer(name, 'q1-errors', '2');

    const batch2 = await waitForStatus(env, name, (s) => s.pending.length > 0);
    expect(pendingIds(batch2)).toEqual(['q1-docs', 'q1-tests']); // the "Tests" id is lowercased
    await answer(name, 'q1-docs', 'README');
    await answer(name, 'q1-tests', '2');

    // Round 2 is asked with the answers of round 1 in the planner's context.
    await waitForPending(env, name, 'q2-cli');
    const round2Prompt = readFileSync(
      path.join(sagaDir, 'runs', 'planner-questions-2-1-a1', 'prompt.md'),
      'utf8',
    );
    expect(round2Prompt).toContain('"answer": "Hello NAME"');
    expect(round2Prompt).toContain('"text": "The CLI can wait."');
    expect(round2Prompt).toContain('"answer": "jest"');
    await answer(name, 'q2-cli', 'stdout');

    // Decomposition: the spec tree on disk, environment included, and the plan summary in the status.
    const v1 = await waitForPending(env, name, 'plan-approval-1');
    expect(existsSync(path.join(sagaDir, 'runs', 'planner-questions-3-1-a1'))).toBe(true); // no more questions
    expect(v1.pending.map((p) => p.kind)).toEqual(['plan-approval']);
    expect(v1.pending[0]).toMatchObject({ options: ['approve', 'revise', 'reject'], recommended: 0 });
    expect(v1.planSummary).toMatchObject({
      version: 1,
      state: 'awaiting-approval',
      milestones: 2,
      tasks: 3,
      exitCriteria: ['E1: greet() returns the greeting', 'E2: The CLI prints the greeting'],
      specPath: path.join(sagaDir, 'SAGA.md'),
    });
    expect(renderStatus(v1)).toContain('Plan v1 (awaiting-approval)');
    expect(renderStatus(v1)).toContain('M2 Command-line entry point');
    const sagaMd1 = readFileSync(path.join(sagaDir, 'SAGA.md'), 'utf8');
    expect(sagaMd1).toContain('Command-line entry point');
    expect(sagaMd1).toMatch(/## Environment[\s\S]*Program type:\*\* CLI\/library/);
    expect(sagaMd1).toMatch(/\| test \| `npm test` \| package\.json[^|]*\| passed/);
    expect(existsSync(path.join(sagaDir, 'milestones', '02-cli', 'tasks', '01-add-cli.md'))).toBe(true);

    // Revise with a note: the planner gets the note, the new plan replaces the old one on disk.
    const note = 'Drop the CLI milestone for now.';
    await answer(name, 'plan-approval-1', 'revise', note);
    const v2 = await waitForPending(env, name, 'plan-approval-2');
    expect(readFileSync(path.join(sagaDir, 'runs', 'planner-revise-2-1-a1', 'prompt.md'), 'utf8')).toContain(
      note,
    );
    expect(v2.planSummary).toMatchObject({ version: 2, state: 'awaiting-approval', milestones: 1, tasks: 2 });
    const sagaMd2 = readFileSync(path.join(sagaDir, 'SAGA.md'), 'utf8');
    expect(sagaMd2).not.toEqual(sagaMd1);
    expect(sagaMd2).not.toContain('Command-line entry point');
    expect(sagaMd2).toContain('the CLI is left for later');
    expect(existsSync(path.join(sagaDir, 'milestones', '02-cli'))).toBe(false);
    expect(v2.phase).toBe('planning');

    // Approval: only now does implementation start.
    await expect(
      env.client.workflow.getHandle(phaseWorkflowId(name, 'implementation')).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
    await answer(name, 'plan-approval-2', 'APPROVE');
    const implementing = await waitForStatus(env, name, (s) => s.phase === 'implementation');
    expect(implementing.planSummary).toMatchObject({ version: 2, state: 'approved' });
    const planning = env.client.workflow.getHandle(phaseWorkflowId(name, 'planning'));
    expect(await planning.result()).toMatchObject({ approved: true, versions: 2 });
    // The status query can answer before the workflow task that starts the child has reached the server.
    const implementation = env.client.workflow.getHandle(phaseWorkflowId(name, 'implementation'));
    let described = await implementation.describe().catch(() => null);
    for (let i = 0; !described && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 200));
      described = await implementation.describe().catch(() => null);
    }
    expect(described?.type).toBe('implementationWorkflow');

    const saga = env.client.workflow.getHandle(sagaWorkflowId(name));
    await saga.cancel();
    expect(await saga.result()).toMatchObject({ phase: 'cancelled' });

    // The recorded planning and saga histories replay on the current workflow code. The saga's first run
    // (intake and planning) continued as new at the phase boundary: that run is the one recorded.
    const latest = await saga.fetchHistory();
    const firstRunId = latest.events?.[0]?.workflowExecutionStartedEventAttributes?.firstExecutionRunId;
    const firstRun = env.client.workflow.getHandle(sagaWorkflowId(name), firstRunId ?? undefined);
    const histories = [
      { workflowId: sagaWorkflowId(name), history: await firstRun.fetchHistory() },
      { workflowId: phaseWorkflowId(name, 'planning'), history: await planning.fetchHistory() },
    ];
    const results = Worker.runReplayHistories({ workflowBundle: { codePath: WORKFLOW_BUNDLE } }, histories);
    for await (const result of results) expect(result.error).toBeUndefined();

    // With RECORD_HISTORIES=1, kept as this version's histories (test/harness/histories.ts): replay-planning
    // checks the newest kept ones, replay.test.ts replays every version's.
    recordHistory('sagaWorkflow', histories[0]!.history);
    recordHistory('planningWorkflow', histories[1]!.history);
    // Eight interactions, two planner rounds, a revise and continue-as-new at the phase boundary: ~25 s on an
    // idle machine; a loaded CI machine once took over a minute.
  }, 150_000);

  test('bad inputs are refused with a clear message and leave the saga where it was', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      script: { planner: { questions: [[{ id: 'only', text: 'One option?', options: ['yes'] }]] } },
    });

    // A bad plan file: nothing starts, the error names the file and the path inside it.
    const badPlan = path.join(env.tmp('plans'), 'bad.yaml');
    const plan = greetingPlan() as { milestones: { tasks: { depends_on: string[] }[] }[] };
    plan.milestones[0]!.tasks[0]!.depends_on = ['9.9'];
    writeFileSync(badPlan, JSON.stringify(plan));
    const refused = await prepareSaga({
      repo,
      argumentsText: 'Add a greeting',
      plan: badPlan,
      name: 'bad-plan',
    }).then(
      () => null,
      (error: unknown) => error as Error,
    );
    expect(refused).toBeInstanceOf(UserError);
    expect(refused!.message).toContain(badPlan);
    expect(refused!.message).toMatch(/milestones\[0\]\.tasks\[0\]\.depends_on/);
    expect(refused!.message).toContain('9.9');

    // A bad --name is a user error too, naming the rule.
    await expect(prepareSaga({ repo, argumentsText: 'Add a greeting', name: 'Bad_Name' })).rejects.toThrow(
      new UserError(
        "--name: Invalid saga name 'Bad_Name': use 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit.",
      ),
    );

    // Invalid planner output: three tries with the errors fed back, then a question, never a crash.
    const { name, sagaDir } = await start(repo, { name: 'bad-planner' });
    await waitForPending(env, name, 'confirm-name');
    await expectRefused(
      name,
      { interactionId: 'confirm-name', choice: 'maybe' },
      'InvalidChoice',
      /'maybe' is not an option of interaction 'confirm-name'\. Choose one of: 1\) confirm, 2\) cancel/,
    );
    await answer(name, 'confirm-name', 'confirm');
    const stuck = await waitForPending(env, name, 'planner-invalid-questions-1-1');
    const invalid = stuck.pending.find((p) => p.id === 'planner-invalid-questions-1-1')!;
    expect(invalid).toMatchObject({ kind: 'question', options: ['retry', 'abort'] });
    expect(invalid.prompt).toContain('questions.0.options: a question needs at least 2 options');
    const runs = readdirSync(path.join(sagaDir, 'runs')).filter((r) => r.startsWith('planner-'));
    expect(runs.sort()).toEqual([
      'planner-questions-1-1-a1',
      'planner-questions-1-1-a2',
      'planner-questions-1-1-a3',
    ]);
    const retryPrompt = readFileSync(
      path.join(sagaDir, 'runs', 'planner-questions-1-1-a2', 'prompt.md'),
      'utf8',
    );
    expect(retryPrompt).toMatch(
      /"previousErrors": \[\s*"questions\.0\.options: a question needs at least 2 options"/,
    );
    expect(stuck.phase).toBe('planning');

    await expectRefused(
      name,
      { interactionId: 'q1-only', choice: 'yes' },
      'UnknownInteraction',
      /no pending interaction 'q1-only'/,
    );
    await expectRefused(
      name,
      { interactionId: 'planner-invalid-questions-1-1', choice: 'ignore' },
      'InvalidChoice',
      /Choose one of: 1\) retry, 2\) abort/,
    );
    await expectRefused(
      name,
      { interactionId: 'confirm-name', choice: 'confirm' },
      'AlreadyAnswered',
      /already answered/,
    );

    // Retry runs the planner three more times; abort ends the saga cancelled, without a plan.
    await answer(name, 'planner-invalid-questions-1-1', 'retry');
    await waitForPending(env, name, 'planner-invalid-questions-1-2');
    await answer(name, 'planner-invalid-questions-1-2', 'abort');
    const saga = env.client.workflow.getHandle(sagaWorkflowId(name));
    expect(await saga.result()).toMatchObject({ phase: 'cancelled' });
    const ended = await sagaStatus(env, name);
    expect(ended.planSummary ?? null).toBeNull();
    expect(existsSync(path.join(sagaDir, 'SAGA.md'))).toBe(false);

    // An invalid plan from the planner is refused with path-precise errors, the same way.
    const cyclic = greetingPlan() as { milestones: { depends_on: number[] }[] };
    cyclic.milestones[0]!.depends_on = [2];
    const planRepo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      script: { planner: { questions: [], plan: cyclic } },
    });
    const badPlanSaga = await start(planRepo, { name: 'bad-plan-output' });
    await waitForPending(env, badPlanSaga.name, 'confirm-name');
    await answer(badPlanSaga.name, 'confirm-name', 'confirm');
    const planStuck = await waitForPending(env, badPlanSaga.name, 'planner-invalid-plan-1-1');
    expect(planStuck.pending[0]!.prompt).toMatch(/milestones\[0\]\.depends_on: .*cycle/i);
    expect(existsSync(path.join(badPlanSaga.sagaDir, 'SAGA.md'))).toBe(false);
    await answer(badPlanSaga.name, 'planner-invalid-plan-1-1', 'abort');
    expect(await env.client.workflow.getHandle(sagaWorkflowId(badPlanSaga.name)).result()).toMatchObject({
      phase: 'cancelled',
    });
  }, 60_000);

  test('a plan file is still shown for approval; revise needs a note; reject cancels', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const { name, sagaDir } = await start(repo, { plan: GREETING_PLAN_FILE, name: 'rejected' });
    await waitForPending(env, name, 'confirm-name');
    await answer(name, 'confirm-name', 'confirm');
    const atApproval = await waitForPending(env, name, 'plan-approval-1');
    expect(atApproval.planSummary).toMatchObject({ version: 1, state: 'awaiting-approval', milestones: 2 });
    expect(readFileSync(path.join(sagaDir, 'SAGA.md'), 'utf8')).toMatch(/## Environment/);
    // With --plan no planner runs.
    expect(
      existsSync(path.join(sagaDir, 'runs')) ? readdirSync(path.join(sagaDir, 'runs')) : [],
    ).not.toContainEqual(expect.stringMatching(/^planner-/));

    await expectRefused(
      name,
      { interactionId: 'plan-approval-1', choice: 'revise' },
      'TextRequired',
      /Choice 'revise' needs a note/,
    );
    await expectRefused(
      name,
      { interactionId: 'plan-approval-1', choice: '4' },
      'InvalidChoice',
      /3\) reject/,
    );
    await expectRefused(
      name,
      { interactionId: 'plan-approval-2', choice: 'approve' },
      'UnknownInteraction',
      /plan-approval-2/,
    );

    await answer(name, 'plan-approval-1', 'reject');
    const saga = env.client.workflow.getHandle(sagaWorkflowId(name));
    expect(await saga.result()).toMatchObject({ phase: 'cancelled' });
    const ended = await sagaStatus(env, name);
    expect(ended.planSummary).toMatchObject({ version: 1, state: 'rejected' });
    expect(ended.pending).toEqual([]);
    await expect(
      env.client.workflow.getHandle(phaseWorkflowId(name, 'implementation')).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
  }, 60_000);

  test('two sagas can never get the same name', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const now = new Date(Date.UTC(2030, 5, 6, 7, 8));
    const first = await start(repo, { now });
    expect(first.name).toBe('add-a-greeting-20300606-0708');
    await waitForPending(env, first.name, 'confirm-name');

    // Same name while the first waits for confirmation (nothing on disk yet): the workflow id refuses it.
    const twin = await prepareSaga({ repo, argumentsText: 'Add a greeting' }, now);
    expect(twin.name).toBe(first.name);
    await expect(startSaga(env.client, twin)).rejects.toThrow(
      new UserError(`A saga named '${first.name}' already exists on this server. Pick another --name.`),
    );

    // Once confirmed, its directory exists and prepareSaga refuses before contacting the server.
    await answer(first.name, 'confirm-name', 'confirm');
    await waitForStatus(env, first.name, () => existsSync(path.join(first.sagaDir, 'manifest.md')));
    await expect(prepareSaga({ repo, argumentsText: 'Add a greeting' }, now)).rejects.toThrow(
      /A saga named 'add-a-greeting-20300606-0708' already exists \(.*\)\. Pick another --name\./,
    );
    await env.client.workflow.getHandle(sagaWorkflowId(first.name)).cancel();

    // A saga cancelled at intake leaves no directory, yet its name stays taken (REJECT_DUPLICATE).
    const cancelled = await start(repo, { name: 'taken-at-intake' });
    await waitForPending(env, cancelled.name, 'confirm-name');
    await answer(cancelled.name, 'confirm-name', 'cancel');
    expect(await env.client.workflow.getHandle(sagaWorkflowId(cancelled.name)).result()).toMatchObject({
      phase: 'cancelled',
    });
    expect(existsSync(cancelled.sagaDir)).toBe(false);
    const again = await prepareSaga({ repo, argumentsText: 'Add a greeting', name: 'taken-at-intake' });
    await expect(startSaga(env.client, again)).rejects.toBeInstanceOf(UserError);
  }, 60_000);
});

describe('planner protocol (pure)', () => {
  test('six questions are asked as a batch of 4, then 2', () => {
    expect(batches(ROUND_1).map((b) => b.map((q) => q.id))).toEqual([
      ['style', 'default', 'scope', 'errors'],
      ['docs', 'Tests'],
    ]);
  });

  test('question ids that would share one interaction id are invalid output', () => {
    const parsed = PlannerQuestionsOutputSchema.safeParse({
      questions: [question('Style', ['a', 'b']), question('style', ['a', 'b'])],
    });
    expect(parsed.success).toBe(false);
    expect(zodErrors(parsed.error!)).toEqual([
      "questions.1.id: id 'style' is the same as questions.0.id (ids are compared case-insensitively)",
    ]);
  });

  test('the plan summary counts milestones, tasks and exit criteria', () => {
    const checked = validatePlan(revisedPlan(), 'revised');
    if (!checked.ok) throw new Error(checked.errors.join('; '));
    expect(summarizePlan(checked.plan, { version: 2, state: 'approved', specPath: '/s/SAGA.md' })).toEqual({
      version: 2,
      state: 'approved',
      problem: 'Add greet(name) to the sample library; the CLI is left for later.',
      milestones: 1,
      tasks: 2,
      exitCriteria: ['E1: greet() returns the greeting'],
      text: '1 milestone, 2 tasks, 1 exit criterion\n  M1 Core library (2 tasks)',
      specPath: '/s/SAGA.md',
    });
  });
});
