/**
 * Autonomous mode's learning (docs/PROCEDURE.md §9.5, §9.6), against the real server with the demo agent as planner and worker:
 * a memory-versus-codebase conflict in an autonomous decision is resolved newer-wins with both sources logged,
 * and a correction of an autonomous decision reported at acceptance is stored as a `[LRN:correction]`.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  MEMORY_DIR,
  parseMemoryFile,
  renderMemoryFile,
  repoMemoryKey,
} from '../../../../src/domain/planning/memory';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import {
  createInProcessSagaEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { oneTaskPlan, startModesSaga } from '../../../harness/modes-helpers';

const memoryFile = (env: SagaTestEnv, repo: string) =>
  path.join(env.sagaHome, MEMORY_DIR, `${repoMemoryKey(realpathSync(repo))}.md`);

const decision = (question: string, choice: string, extra: Record<string, unknown> = {}) => ({
  question,
  choice,
  citation: 'codebase pattern: package.json',
  confident: true,
  substantive: true,
  ...extra,
});

describe('learning: conflicts and corrections', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('planning-learning');
  });
  afterAll(async () => env.close());

  test('memory said X, codebase said Y: the newer signal wins, both are logged', async () => {
    const conflict = (memoryChoice: string, saga: string, codebaseChoice: string) => ({
      conflict: {
        memory: { choice: memoryChoice, citation: `memory: ${saga}/decisions.md` },
        codebase: {
          choice: codebaseChoice,
          citation: 'codebase pattern: package.json',
          path: 'package.json',
        },
      },
    });
    const saga = await startModesSaga(env, {
      name: 'learn-conflict',
      args: '--autonomous Add a greeting',
      script: {
        planner: {
          problem: 'Greet people.',
          questions: [],
          decisions: [
            // The memory entry is from 2001, package.json from today: the codebase wins.
            decision('Module format', 'ES modules', conflict('ES modules', 'older-saga', 'CommonJS')),
            // The memory entry is dated 2099, newer than any commit: memory wins.
            decision('Test runner', 'node --test', conflict('jest', 'newer-saga', 'node --test')),
          ],
          plan: oneTaskPlan(),
        },
      },
      // Written before the planner runs (confirm-name comes first): earlier sagas' entries of this repo.
      beforeConfirm: (repo: string) => {
        const entry = (at: string, saga: string, subject: string, text: string) => ({
          at,
          tag: 'DEC' as const,
          subject,
          text,
          saga,
          file: 'decisions.md',
        });
        mkdirSync(path.dirname(memoryFile(env, repo)), { recursive: true });
        writeFileSync(
          memoryFile(env, repo),
          renderMemoryFile(repo, [
            entry('2099-01-01T00:00:00.000Z', 'newer-saga', 'Test runner', 'jest'),
            entry('2001-01-01T00:00:00.000Z', 'older-saga', 'Module format', 'ES modules'),
          ]),
        );
      },
    });
    const approval = await waitForPending(env, saga.name, 'plan-approval-1');
    const lines = approval.pending[0]!.prompt.split('\n');
    const today = /\d{4}-\d\d-\d\d/.source;
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          '^D1\\. Module format: CommonJS — Memory said ES modules \\(memory: older-saga/decisions\\.md, 2001-01-01\\), ' +
            `codebase said CommonJS \\(codebase pattern: package\\.json, ${today}\\), chose CommonJS because newer$`,
        ),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^D2\. Test runner: jest — Memory said jest \(memory: newer-saga\/decisions\.md, 2099-01-01\), codebase said node --test .*, chose jest because newer$/,
      ),
    );
    // Both sources in decisions.md and in SAGA.md's rationale block.
    const entry = saga.decisions().find((d) => d.title.startsWith('Autonomous decisions (planning)'))!;
    expect(entry.lines[0]).toMatch(
      /^- Module format: CommonJS — Memory said ES modules .* chose CommonJS because newer$/,
    );
    const sagaMd = readFileSync(path.join(saga.sagaDir, 'SAGA.md'), 'utf8');
    expect(sagaMd).toMatch(
      /- \*\*Test runner:\*\* jest — Memory said jest .*codebase said node --test .*chose jest/,
    );
    await saga.answer('plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('a correction of an autonomous decision reported at acceptance is a [LRN:correction]', async () => {
    const saga = await startModesSaga(env, {
      name: 'learn-accept',
      args: '--autonomous Add a greeting',
      script: {
        planner: {
          problem: 'Greet people.',
          questions: [],
          decisions: [decision('Module format', 'CommonJS')],
          plan: oneTaskPlan(),
        },
      },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    const accepting = await waitForPending(env, saga.name, 'acceptance-1', 150_000);
    expect(accepting.pending[0]!.prompt).toContain(
      '\nD1. Module format: CommonJS — codebase pattern: package.json',
    );
    await saga.answer('acceptance-1', 'report issues', 'D1: ES modules :: check: true');
    await waitForStatus(env, saga.name, (s) => s.log.some((l) => l.includes('reported 1 issue(s)')));
    const correction = saga.decisions().find((d) => d.title.startsWith('[LRN:correction]'));
    expect(correction).toMatchObject({
      title: '[LRN:correction] 1 autonomous decision(s) corrected by tester at acceptance round 1',
      lines: ['- D1 Module format: CommonJS (codebase pattern: package.json) → ES modules'],
    });
    const memory = parseMemoryFile(readFileSync(memoryFile(env, saga.repo), 'utf8'));
    expect(memory[0]).toMatchObject({ tag: 'LRN:correction', subject: 'Module format', saga: saga.name });
    expect(memory[0]!.text).toContain('to: ES modules');
    await env.client.workflow.getHandle(sagaWorkflowId(saga.name)).cancel();
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled', 120_000);
  }, 300_000);
});
