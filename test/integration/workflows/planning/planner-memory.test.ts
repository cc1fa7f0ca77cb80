/**
 * The planning side of docs/PROCEDURE.md, against the real server with the demo agent as the planner:
 * the intake restatement and unknowns in the name confirmation (§1.3); autonomous mode's memory (§9.6: a user's
 * correction of an autonomous decision stored as `[LRN:correction]`, shown with its citation to the next
 * saga's planner in the same repo); and the degrade to interactive elicitation when every substantive
 * decision needs asking.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { respond } from '../../../../src/client/saga-client';
import { createSampleRepo, greetingPlan } from '../../../../src/demo/sample-repo';
import { intakeBrief } from '../../../../src/domain/request/intake';
import { parseFlags } from '../../../../src/domain/request/flags';
import {
  addMemoryEntries,
  parseMemoryFile,
  parseDecisionCorrections,
  plannerMemory,
  renderMemoryFile,
  type MemoryEntry,
} from '../../../../src/domain/planning/memory';
import { validatePlan } from '../../../../src/domain/plan';
import { AUTONOMY_INSUFFICIENT_NOTE } from '../../../../src/domain/planning/planner';
import {
  createSagaTestEnv,
  useEnvInProcess,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { oneTaskPlan, parseDecisions, promptContext } from '../../../harness/modes-helpers';

const decision = (question: string, choice: string, citation: string, confident: boolean) => ({
  question,
  choice,
  citation,
  confident,
  substantive: true,
});

describe('planning procedure: intake, memory of earlier sagas, degrade to elicitation', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('planner-memory');
    useEnvInProcess(env);
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  const answer = (name: string, interactionId: string, choice: string, text?: string) =>
    respond(env.client, name, { interactionId, choice, user: 'tester', ...(text ? { text } : {}) });

  async function start(repo: string, name: string, args: string) {
    const input = await prepareSaga({ repo, argumentsText: args, name });
    await startSaga(env.client, input);
    return input;
  }

  test('intake: the name confirmation gives the request and its visible unknowns, before anything exists', async () => {
    const repo = createSampleRepo(path.join(env.tmp('intake'), 'greeting'));
    const input = await start(repo, 'intake-brief', '--autonomous Add a greeting or a farewell');
    // Answerable at once, as before: the restatement needs no I/O.
    await answer(input.name, 'confirm-name', 'cancel');
    const done = await waitForStatus(env, input.name, (s) => s.phase === 'cancelled');
    const history = await env.client.workflow.getHandle(`saga-${input.name}`).fetchHistory();
    const activities = (history.events ?? []).flatMap(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    // Nothing but chat notifications (question, answer) ran: no read of the repo, nothing written.
    expect(activities.filter((a) => !a.startsWith('notify'))).toEqual([]);
    expect(existsSync(input.sagaDir)).toBe(false);
    expect(done.log.join('\n')).toContain('answered confirm-name: cancel');

    // The same prompt on a saga left waiting.
    const waiting = await start(repo, 'intake-brief-2', '--autonomous Add a greeting or a farewell');
    const status = await waitForPending(env, waiting.name, 'confirm-name');
    const prompt = status.pending[0]!.prompt;
    expect(status.pending[0]).toMatchObject({ options: ['confirm', 'cancel'], recommended: 0 });
    expect(prompt.split('\n')[0]).toBe(
      `Create saga 'intake-brief-2' in ${waiting.sagaDir} for: Add a greeting or a farewell?`,
    );
    expect(prompt).toContain(
      `Request: Add a greeting or a farewell. To be built in the repository greeting (${repo}), on top of ${waiting.base}.`,
    );
    expect(prompt).toMatch(/\nRough shape: Planning: discovery of the repository, questions to close/);
    const unknowns = prompt.slice(prompt.indexOf('Unknowns in the request itself:\n')).split('\n').slice(1);
    // Only what this request leaves open; the planner's restatement names the rest once it read the repo.
    expect(unknowns.filter((l) => l.startsWith('- '))).toEqual([
      '- Which of the alternatives in "Add a greeting or a farewell" is wanted.',
    ]);
    expect(prompt).toContain('Once you confirm, the planner restates the request');
    expect(existsSync(waiting.sagaDir)).toBe(false);
    await answer(waiting.name, 'confirm-name', 'cancel');
    await waitForStatus(env, waiting.name, (s) => s.phase === 'cancelled');
  });

  test('intake brief: a --plan saga restates the plan; an empty goal is the first unknown', () => {
    const flags = parseFlags('Ship it', {});
    const checked = validatePlan(greetingPlan(), 'greeting.yaml');
    if (!checked.ok) throw new Error(checked.errors.join('\n'));
    const base = { name: 'x', sagaDir: '/h/x', repo: '/r/app', base: 'main', flags, agent: null };
    const planned = intakeBrief({ ...base, goal: 'Ship it', plan: checked.plan, planSource: 'plan.yaml' });
    expect(planned.problem).toMatch(
      /To be built in the repository app \(\/r\/app\), on top of main, as planned in plan\.yaml\.$/,
    );
    expect(planned.shape).toMatch(
      /^The plan already decomposes it: 2 milestones, 3 tasks, 2 exit criteria; no planner/,
    );
    expect(planned.unknowns).toContain(
      "Whether the plan's checks run in this repository as written: discovery shows the commands.",
    );
    const empty = intakeBrief({ ...base, goal: '', plan: null, planSource: null });
    expect(empty.unknowns[0]).toBe('What to build: no goal was given.');
  });

  test('a corrected autonomous decision is a [LRN:correction]; the next saga in the repo gets it, cited', async () => {
    const repo = createSampleRepo(path.join(env.tmp('memory'), 'greeting'), {
      script: {
        planner: {
          problem: 'Greet people.',
          questions: [],
          decisions: [
            decision('Module format', 'CommonJS', 'codebase pattern: src/greet.js uses module.exports', true),
            decision('Test runner', 'node --test', 'codebase pattern: package.json scripts.test', true),
          ],
          plan: oneTaskPlan(),
        },
      },
    });

    // Saga A: autonomous; at approval the user corrects D1.
    const a = await start(repo, 'mem-first', '--autonomous Add a greeting');
    await answer(a.name, 'confirm-name', 'confirm');
    const approval = await waitForPending(env, a.name, 'plan-approval-1');
    const firstPrompt = readFileSync(
      path.join(a.sagaDir, 'runs', 'planner-questions-1-1-a1', 'prompt.md'),
      'utf8',
    );
    expect(firstPrompt).toContain(
      'None: no earlier saga of this repository recorded decisions or learnings.',
    );
    expect(approval.pending[0]!.prompt.split('\n').slice(1)).toEqual([
      'Autonomous decisions (to correct one, revise with a line "D<n>: <what it should be>"):',
      'D1. Module format: CommonJS — codebase pattern: src/greet.js uses module.exports',
      'D2. Test runner: node --test — codebase pattern: package.json scripts.test',
    ]);
    await answer(
      a.name,
      'plan-approval-1',
      'revise',
      'D1: ES modules (the package is type: module)\nKeep it small.',
    );
    const second = await waitForPending(env, a.name, 'plan-approval-2');
    // The corrected decision stands in the next approval, and the reviser was told about it.
    expect(second.pending[0]!.prompt).toContain(
      "D1. Module format: ES modules (the package is type: module) — the user's correction (D1, [LRN:correction] in decisions.md)",
    );
    const reviseContext = promptContext(
      readFileSync(path.join(a.sagaDir, 'runs', 'planner-revise-2-1-a1', 'prompt.md'), 'utf8'),
    );
    expect(reviseContext.corrections).toEqual([
      expect.objectContaining({ number: 1, correction: 'ES modules (the package is type: module)' }),
    ]);
    expect(second.log.some((l) => l.includes('[LRN:correction] D1 Module format → ES modules'))).toBe(true);

    // Recorded in the saga's decisions.md (what the citation points at) and in the repo's memory.
    const entries = parseDecisions(readFileSync(path.join(a.sagaDir, 'decisions.md'), 'utf8'));
    const correction = entries.find((e) => e.title.startsWith('[LRN:correction]'));
    expect(correction).toMatchObject({
      title: '[LRN:correction] 1 autonomous decision(s) corrected by tester',
      lines: [
        '- D1 Module format: CommonJS (codebase pattern: src/greet.js uses module.exports) → ES modules (the package is type: module)',
      ],
    });
    const memoryDir = path.join(env.sagaHome, '.memory');
    const memoryFiles = readdirSync(memoryDir);
    expect(memoryFiles).toHaveLength(1);
    const memory = parseMemoryFile(readFileSync(path.join(memoryDir, memoryFiles[0]!), 'utf8'));
    expect(memory[0]).toMatchObject({ tag: 'LRN:correction', subject: 'Module format', saga: 'mem-first' });
    expect(memory.filter((e) => e.tag === 'DEC').map((e) => e.subject)).toEqual([
      'Module format',
      'Test runner',
    ]);
    await answer(a.name, 'plan-approval-2', 'reject');
    await waitForStatus(env, a.name, (s) => s.phase === 'cancelled');

    // Saga B, same repo, not autonomous: its planner's prompt has A's decisions and the correction, cited.
    const b = await start(repo, 'mem-second', 'Add a farewell');
    await answer(b.name, 'confirm-name', 'confirm');
    await waitForPending(env, b.name, 'plan-approval-1');
    for (const label of ['planner-questions-1-1-a1', 'planner-plan-1-1-a1']) {
      const prompt = readFileSync(path.join(b.sagaDir, 'runs', label, 'prompt.md'), 'utf8');
      expect(prompt).toContain(
        '- [LRN:correction] Module format: the user (tester) corrected the autonomous decision "CommonJS" ' +
          '(codebase pattern: src/greet.js uses module.exports) to: ES modules (the package is type: module).',
      );
      expect(prompt).toContain('(cite as "memory: mem-first/decisions.md")');
      expect(prompt).toContain('cite it exactly as given');
      expect(promptContext(prompt).memory).toEqual([
        expect.objectContaining({ tag: 'LRN:correction', citation: 'memory: mem-first/decisions.md' }),
        expect.objectContaining({
          tag: 'DEC',
          subject: 'Module format',
          citation: 'memory: mem-first/decisions.md',
        }),
        expect.objectContaining({ tag: 'DEC', subject: 'Test runner' }),
      ]);
    }
    // The cited file holds the entry.
    expect(readFileSync(path.join(env.sagaHome, 'mem-first', 'decisions.md'), 'utf8')).toContain(
      '[LRN:correction]',
    );
    await answer(b.name, 'plan-approval-1', 'reject');
    await waitForStatus(env, b.name, (s) => s.phase === 'cancelled');
  });

  test('autonomous mode where every substantive decision needs asking degrades to interactive elicitation', async () => {
    const repo = createSampleRepo(path.join(env.tmp('degrade'), 'greeting'), {
      script: {
        planner: {
          problem: 'Greet people.',
          questions: [],
          decisions: [
            decision('Greeting language', 'English', 'default — no signal', false),
            decision('Empty name', 'Hello, world!', 'default — no signal', false),
          ],
          plan: oneTaskPlan(),
        },
      },
    });
    const saga = await start(repo, 'degrade', '--autonomous Add a greeting');
    await answer(saga.name, 'confirm-name', 'confirm');
    const asked = await waitForStatus(env, saga.name, (s) => s.pending.length === 2);
    expect(asked.log.some((l) => l.endsWith(` ${AUTONOMY_INSUFFICIENT_NOTE}`))).toBe(true);
    expect(AUTONOMY_INSUFFICIENT_NOTE).toBe(
      'Autonomous mode found insufficient context. Switching to interactive elicitation.',
    );
    // Interactive elicitation: the questions are plain questions, without the autonomous [D] default.
    expect(asked.pending.map((p) => p.options)).toEqual([
      ['English', 'Something else (say which with --text)'],
      ['Hello, world!', 'Something else (say which with --text)'],
    ]);
    expect(asked.pending[0]!.prompt).not.toContain('[D]');
    const titles = parseDecisions(readFileSync(path.join(saga.sagaDir, 'decisions.md'), 'utf8')).map(
      (e) => e.title,
    );
    expect(titles).toContain(AUTONOMY_INSUFFICIENT_NOTE);
    await answer(saga.name, 'q1-d1', 'English');
    await answer(saga.name, 'q1-d2', '2', 'Ask for a name');
    await waitForPending(env, saga.name, 'plan-approval-1');
    // Later planner steps run as interactive ones.
    const round2 = readFileSync(
      path.join(saga.sagaDir, 'runs', 'planner-questions-2-1-a1', 'prompt.md'),
      'utf8',
    );
    expect(promptContext(round2).autonomous).toBe(false);
    await answer(saga.name, 'plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('memory file: entries round-trip, retries add nothing, the current saga is left out of its own prompt', () => {
    const entry = (saga: string, tag: MemoryEntry['tag'], subject: string): MemoryEntry => ({
      at: '2030-01-02T03:04:05.000Z',
      tag,
      subject,
      text: `about ${subject}`,
      saga,
      file: 'decisions.md',
    });
    const first = addMemoryEntries([], [entry('a', 'DEC', 'One'), entry('a', 'LRN:correction', 'Two')]);
    const again = addMemoryEntries(first, [entry('a', 'DEC', 'One')]);
    expect(again).toEqual(first);
    const text = renderMemoryFile('/r/app', addMemoryEntries(again, [entry('b', 'DEC', 'Three')]));
    const parsed = parseMemoryFile(text);
    expect(parsed.map((e) => `${e.saga}:${e.subject}`)).toEqual(['b:Three', 'a:One', 'a:Two']);
    expect(plannerMemory(parsed, 'b').map((i) => `${i.tag} ${i.subject} ${i.citation}`)).toEqual([
      'LRN:correction Two memory: a/decisions.md',
      'DEC One memory: a/decisions.md',
    ]);
    const listed = [{ question: 'Q', choice: 'x', citation: 'c' }];
    expect(parseDecisionCorrections('d1 = y\nD4: z\nnot a correction', listed)).toEqual({
      corrections: [{ number: 1, decision: listed[0], correction: 'y' }],
      unknown: ['D4'],
    });
  });
});
