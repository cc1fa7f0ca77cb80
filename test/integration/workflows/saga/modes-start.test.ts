/**
 * Modes at the start of a saga (the flags contract and the execution modes, docs/PROCEDURE.md §10), against the real server with the demo agent:
 * flags parsed, persisted to manifest.md before any artifact and restored from history; the loud refusal
 * of `--subagents` by a profile that sets `subagent_dispatch: false`, and `--parallel` running its lanes; autonomous planning (decisions, [D] default, rationale block, counts);
 * and, with both modes on, the auto-pick logged before a review that then fails.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from '../../../../src/client/args';
import { continueCommand } from '../../../../src/client/commands/continue';
import { COMMAND_DECLS } from '../../../../src/client/declarations';
import { getStatus } from '../../../../src/client/saga-client';
import { prepareSaga } from '../../../../src/client/commands/start';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import { parseFlags } from '../../../../src/domain/request/flags';
import { resolveExecutionMode } from '../../../../src/domain/request/mode-resolution';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import type { Plan } from '../../../../src/domain/plan';
import { renderRationaleBlock } from '../../../../src/domain/record/render';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type RunningWorkers,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { manifestFlagsOf, oneTaskPlan, runContext, startModesSaga } from '../../../harness/modes-helpers';

/** The rationale block of SAGA.md (docs/PROCEDURE.md §9.4), split into its parts. */
function rationaleBlock(sagaDir: string) {
  const md = readFileSync(path.join(sagaDir, 'SAGA.md'), 'utf8');
  const start = md.indexOf('## Recommendation Rationale');
  expect(start).toBeGreaterThan(-1);
  const block = md.slice(start, md.indexOf('\n## ', start + 1));
  const [decisionsPart, rest] = block.split('**Tradeoffs accepted:**');
  return {
    decisions: decisionsPart!.split('\n').filter((l) => l.startsWith('- ')),
    tradeoffs: rest!.split('\n').filter((l) => l.startsWith('- ')),
    askedBack: /\*\*Decisions asked back to user:\*\* (.*)/.exec(block)?.[1],
  };
}

describe('modes at start', () => {
  let env: SagaTestEnv;
  let workers: RunningWorkers;
  beforeAll(async () => {
    env = await createSagaTestEnv('modes-start');
    process.env.SAGA_HOME = env.sagaHome;
    process.env.SAGA_HOST_ID = env.hostId;
    process.env.SAGA_TASK_QUEUE = env.taskQueue;
    workers = await env.startWorkers();
  });
  afterAll(async () => env.close());

  test('a flag error stops the saga before it starts and is shown verbatim', async () => {
    const repo = createSampleRepo(path.join(env.tmp('bad-flag'), 'repo'));
    const expected = parseFlags('--quality-locked --bogus Ship it', {}).error;
    expect(expected).toMatch(/^Unknown flag '--bogus'/);
    const error = await prepareSaga({
      repo,
      argumentsText: '--quality-locked --bogus Ship it',
      name: 'md-bad',
    }).catch((e: Error) => e);
    expect((error as Error).message).toBe(`Saga: ${expected}`);
    expect(existsSync(path.join(env.sagaHome, 'md-bad'))).toBe(false);
  });

  test('--subagents on a profile with subagent_dispatch: false is refused loudly, lanes kept; flags persist and are restored', async () => {
    const args = '--subagents --parallel=3 Add a greeting';
    const saga = await startModesSaga(env, {
      name: 'md-refuse',
      args,
      agent: 'solo',
      plan: oneTaskPlan(),
      sageConfig: 'autonomous: true\n',
    });
    const parsed = parseFlags(args, { autonomous: true });
    expect(parsed).toMatchObject({ subagents: true, parallel_lanes: 3, autonomous_source: 'config' });
    const refusal = resolveExecutionMode(true, { subagentDispatch: false, profileName: 'solo' });

    // The refusal is an exception checkpoint: it waits, and nothing but the manifest and decisions exist yet.
    const status = await waitForPending(env, saga.name, 'subagents-unavailable');
    expect(status.pending).toEqual([
      expect.objectContaining({
        id: 'subagents-unavailable',
        kind: 'checkpoint',
        prompt: refusal.announcement,
        options: ['continue inline', 'abort'],
      }),
    ]);
    expect(existsSync(path.join(saga.sagaDir, 'SAGA.md'))).toBe(false);
    expect(status.log.some((line) => line.endsWith(refusal.announcement!))).toBe(true);
    expect(status.log.some((line) => /parallel/i.test(line) && /unavailable|sequential/.test(line))).toBe(
      false,
    );

    const manifest = saga.manifest();
    expect(manifest.execution_mode).toBe('inline (subagents-unavailable)');
    expect(manifest.parallel_mode).toBe('parallel (3 lanes)');
    expect(status.executionMode).toBe('inline (subagents-unavailable); parallel (3 lanes)');
    expect(manifest.flags).toEqual(manifestFlagsOf(parsed));
    expect(manifest.auto_picked_checkpoints).toEqual([]);
    expect(saga.decisions().map((d) => [d.title, d.lines])).toEqual([
      ['Refused --subagents: inline (subagents-unavailable)', [refusal.announcement]],
    ]);
    // parsed == persisted == what status (and so `saga continue`) shows.
    expect((await getStatus(env.client, saga.name)).flags).toEqual(parsed);

    // Restored on continue: brand-new workers rebuild the saga from history alone.
    const before = readFileSync(path.join(saga.sagaDir, 'manifest.md'), 'utf8');
    const handle = env.client.workflow.getHandle(sagaWorkflowId(saga.name));
    await workers.stop();
    workers = await env.startWorkers();
    const restored = await getStatus(env.client, saga.name);
    expect(restored.flags).toEqual(parsed);
    expect(manifestFlagsOf(restored.flags)).toEqual(saga.manifest().flags);
    expect(restored.pending.map((p) => p.id)).toEqual(['subagents-unavailable']);

    await saga.answer('subagents-unavailable', 'continue inline');
    const atApproval = await waitForPending(env, saga.name, 'plan-approval-1');
    expect(atApproval.flags).toEqual(parsed);
    // Still one run per flag decision: the manifest header was not rewritten by the restart.
    expect(readFileSync(path.join(saga.sagaDir, 'manifest.md'), 'utf8')).toBe(before);
    await saga.answer('plan-approval-1', 'reject');
    expect((await handle.result()).phase).toBe('cancelled');
  });

  test('--parallel without --subagents runs its lanes (inline), with nothing refused', async () => {
    const saga = await startModesSaga(env, {
      name: 'md-parallel',
      args: '--parallel Add a greeting',
      agent: 'plain',
      plan: oneTaskPlan(),
    });
    const parsed = parseFlags('--parallel Add a greeting', {});
    // No subagents were asked for, so there is nothing to acknowledge: straight on to the plan.
    const status = await waitForPending(env, saga.name, 'plan-approval-1');
    expect(status.pending.map((p) => p.id)).toEqual(['plan-approval-1']);
    expect(status.log.some((line) => /Parallel lanes are unavailable/.test(line))).toBe(false);
    expect(status.executionMode).toBe('inline; parallel (2 lanes)');
    expect(saga.manifest()).toMatchObject({
      execution_mode: 'inline',
      parallel_mode: 'parallel (2 lanes)',
      flags: manifestFlagsOf(parsed),
    });
    expect(saga.decisions()).toEqual([]);
    await saga.answer('plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('--autonomous: the planner decides with citations, asks back the unconfident substantive one, [D] is documented', async () => {
    const decisions = [
      {
        question: 'Module format',
        choice: 'CommonJS',
        citation: 'codebase pattern: src/index.js uses module.exports',
        confident: true,
        substantive: true,
      },
      {
        question: 'Test runner',
        choice: 'node --test',
        citation: 'codebase pattern: package.json scripts.test',
        confident: true,
        substantive: true,
      },
      {
        question: 'Helper order',
        choice: 'alphabetical',
        citation: 'default — no signal',
        confident: false,
        substantive: false,
      },
      {
        question: 'What should greet() return for an empty name?',
        choice: 'Hello, world!',
        citation: 'default — no signal',
        confident: false,
        substantive: true,
      },
    ];
    const tradeoffs = {
      short_term: 'one more file',
      long_term: 'a CLI to maintain',
      balance: 'small and tested',
    };
    const saga = await startModesSaga(env, {
      name: 'md-auto',
      args: '--autonomous Add a greeting',
      script: {
        planner: {
          problem: 'Greet people.',
          questions: [],
          decisions,
          plan: { ...oneTaskPlan(), tradeoffs },
        },
      },
      files: { '.sage/conventions.md': '# Conventions\n\nCommonJS modules, node:test.\n' },
    });

    // Only the unconfident substantive decision is asked, with the planner's choice first and [D] default.
    const asked = await waitForPending(env, saga.name, 'q1-d1');
    expect(asked.pending).toEqual([
      expect.objectContaining({
        id: 'q1-d1',
        kind: 'question',
        options: ['Hello, world!', 'Something else (say which with --text)', '[D] default'],
        recommended: 0,
      }),
    ]);
    // The first question comes after the planner's restatement of the request.
    expect(asked.pending[0]!.prompt).toMatch(
      /^The planner's restatement of your request:\nProblem: Greet people\.\n\nWhat should greet\(\) return for an empty name\?\n\(--autonomous could not decide/,
    );
    // Pre-flight context went to the planner: the repo's conventions and the decisions recorded so far.
    expect(runContext(saga.sagaDir, 'planner-questions-1-1-a1').preflight).toEqual({
      files: [{ path: '.sage/conventions.md', excerpt: '# Conventions\n\nCommonJS modules, node:test.\n' }],
      priorDecisions: [
        expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d — tester answered confirm-name: confirm$/),
      ],
    });
    await saga.answer('q1-d1', '[D] default');

    // The final approval still belongs to the user.
    const atApproval = await waitForPending(env, saga.name, 'plan-approval-1');
    expect(atApproval.pending.map((p) => p.id)).toEqual(['plan-approval-1']);
    // Decisions repeated by later rounds are not asked again; the plan stage got the default as the answer.
    expect(runContext(saga.sagaDir, 'planner-plan-1-1-a1').answers).toEqual([
      { question: 'What should greet() return for an empty name?', answer: 'Hello, world!' },
    ]);

    expect(saga.manifest().autonomous_decisions).toEqual([
      { phase: 'planning', decided: 3, asked: 1, sources: { codebase: 2, default: 1 } },
    ]);
    const entries = saga.decisions();
    expect(entries.map((e) => e.title)).toEqual([
      'Defaults adopted ([D]) for 1 question(s) asked back',
      'Autonomous decisions (planning): 3 decided',
      'Intake restatement by the planner',
    ]);
    expect(entries[0]!.lines).toEqual([
      '- What should greet() return for an empty name?: Hello, world! — default — no signal; the user picked [D]',
    ]);
    expect(entries[1]!.lines).toEqual([
      '- Module format: CommonJS — codebase pattern: src/index.js uses module.exports',
      '- Test runner: node --test — codebase pattern: package.json scripts.test',
      '- Helper order: alphabetical — default — no signal (unconfident, cosmetic: default documented)',
    ]);

    const block = rationaleBlock(saga.sagaDir);
    expect(block.decisions.length).toBeLessThanOrEqual(10);
    expect(block.decisions).toEqual([
      '- **Module format:** CommonJS — codebase pattern: src/index.js uses module.exports',
      '- **Test runner:** node --test — codebase pattern: package.json scripts.test',
      '- **Helper order:** alphabetical — default — no signal',
      '- **What should greet() return for an empty name?:** Hello, world! — default — no signal ([D] picked by the user)',
    ]);
    expect(block.tradeoffs).toEqual([
      '- Short-term: one more file',
      '- Long-term: a CLI to maintain',
      '- Why this is the right balance: small and tested',
    ]);
    expect(block.askedBack).toBe('What should greet() return for an empty name?');
    await saga.answer('plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('both modes: the auto-pick is logged before the review, which then fails; exception checkpoints still wait', async () => {
    const args = '--autonomous --quality-locked --subagents Add a greeting';
    const saga = await startModesSaga(env, {
      name: 'md-both-fail',
      args,
      agent: 'broken',
      plan: oneTaskPlan(),
    });
    // Subagent-unavailable is an exception checkpoint: it waits even with both modes on.
    await waitForPending(env, saga.name, 'subagents-unavailable');
    await saga.answer('subagents-unavailable', 'continue inline');

    const handle = env.client.workflow.getHandle(sagaWorkflowId(saga.name));
    await expect(handle.result()).rejects.toThrow();
    const failed = await waitForStatus(env, saga.name, (s) => s.phase === 'failed');
    expect(failed.pending).toEqual([]);

    const manifest = saga.manifest();
    expect(manifest.execution_mode).toBe('inline (subagents-unavailable)');
    expect(manifest.auto_picked_checkpoints).toEqual([
      {
        phase: 'planning',
        checkpoint: 'plan-approval',
        decision: 'A',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        reason: '--autonomous --quality-locked both active',
        flag_sources: { quality_locked: 'flag', autonomous: 'flag' },
      },
    ]);
    // The review never produced an iteration: it failed after the auto-pick was written.
    expect(manifest.quality_locked_history).toEqual([]);
    const transcript = readFileSync(
      path.join(saga.sagaDir, 'runs', 'self-review-plan-plan-i1', 'transcript.log'),
      'utf8',
    );
    expect(transcript).toContain('reviewer/plan');
    expect(saga.runs()).toEqual([]);

    const entries = saga.decisions();
    expect(entries.map((e) => e.title)).toEqual([
      'Auto-pick: [A] Review at plan-approval checkpoint',
      'Refused --subagents: inline (subagents-unavailable)',
    ]);
    expect(entries[0]!.lines).toEqual([
      'Flags active: --quality-locked (flag), --autonomous (flag)',
      'Effect: Triggered quality-locked review loop (results in manifest under quality_locked_history).',
      'Override: omit --quality-locked to disable the flag; omit --autonomous to disable the flag.',
    ]);
    expect(entries[0]!.stamp).toBe(
      manifest.auto_picked_checkpoints[0]!.timestamp.slice(0, 16).replace('T', ' '),
    );

    // `saga continue` on the failed run starts planning again with the flags it was started with.
    const out: string[] = [];
    const io = { out: (line: string) => out.push(line), err: (line: string) => out.push(line) };
    expect(
      await continueCommand(
        parseArgs(COMMAND_DECLS, 'continue', [saga.name, '--detach']),
        io,
        async () => env.client,
      ),
    ).toBe(0);
    expect(out.join('\n')).toContain(`Saga '${saga.name}' had failed before its plan was approved`);
    const continued = await waitForPending(env, saga.name, 'confirm-name');
    expect(continued.flags).toEqual(parseFlags(args, {}));
    expect(manifestFlagsOf(continued.flags)).toEqual(manifest.flags);
    await handle.cancel();
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('the rationale block keeps to 10 bullets, pointing to decisions.md for the rest', () => {
    const plan = {
      ...(oneTaskPlan() as unknown as Plan),
      rationale: Array.from({ length: 14 }, (_, i) => `d${i + 1}`),
    };
    const bullets = renderRationaleBlock(plan, true)
      .split('\n')
      .filter((l) => l.startsWith('- '));
    expect(bullets).toHaveLength(10);
    expect(bullets[9]).toBe('- …and 5 more in decisions.md');
  });
});
