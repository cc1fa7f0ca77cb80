/**
 * One row of the board's saga list (views.ts sagaSummary): what it waits for comes from the status when the
 * saga answered, else from its search attributes; a saga that was cancelled waits for no one, even while it
 * is still cleaning up (its status still holding the question it was asked) or after it closed with the
 * attribute's last value.
 */
import { sagaSummary } from '../../../../src/client/board/views';
import type { SagaListEntry } from '../../../../src/client/saga-client';
import type { Interaction, SagaStatus } from '../../../../src/domain/contract/state';
import { parseFlags } from '../../../../src/domain/request/flags';

const question = (id: string, openedAt: string): Interaction => ({
  id,
  kind: 'question',
  prompt: 'Which colour?',
  options: ['red', 'blue'],
  recommended: null,
  textRequiredFor: [],
  owner: 'saga-x',
  openedAt,
});

function status(phase: string, pending: Interaction[]): SagaStatus {
  return {
    name: 'x',
    workflowId: 'saga-x',
    phase: phase as SagaStatus['phase'],
    goal: 'Ship it',
    repo: '/repos/app',
    flags: parseFlags('Ship it', {}),
    executionMode: 'inline',
    pending,
    milestones: [],
    integrationBranch: 'saga/x/integration',
    sagaDir: '/home/u/.sagas/x',
    uiUrl: '',
    round: 1,
    log: [],
  };
}

const entry = (over: Partial<SagaListEntry> = {}): SagaListEntry => ({
  name: 'x',
  workflowId: 'saga-x',
  status: 'RUNNING',
  phase: 'planning',
  awaitingInput: false,
  startTime: '2026-12-06T10:00:00.000Z',
  ...over,
});

describe('a row of the board list', () => {
  it('counts the pending questions and gives when the newest opened', () => {
    const row = sagaSummary(
      entry(),
      status('planning', [
        question('q1-a', '2026-12-06T10:01:00Z'),
        question('q1-b', '2026-12-06T10:02:00Z'),
      ]),
    );
    expect(row).toMatchObject({ phase: 'planning', goal: 'Ship it', waiting: 2 });
    expect(row.waitingSince).toBe('2026-12-06T10:02:00Z');
  });

  it('a saga that did not answer: one wait from its attribute, when unknown', () => {
    expect(sagaSummary(entry({ awaitingInput: true }), null)).toMatchObject({
      waiting: 1,
      waitingSince: null,
    });
    expect(sagaSummary(entry(), null)).toMatchObject({ waiting: 0, goal: '' });
  });

  it('a cancelled saga still cleaning up waits for no one, though its status holds the question', () => {
    const row = sagaSummary(entry(), status('cancelled', [question('q1-a', '2026-12-06T10:01:00Z')]));
    expect(row).toMatchObject({ phase: 'cancelled', running: true, waiting: 0, waitingSince: null });
  });

  it('a cancelled saga that did not answer, its attribute still saying waiting, waits for no one', () => {
    const closed = entry({ status: 'CANCELLED', phase: 'cancelled', awaitingInput: true });
    expect(sagaSummary(closed, null)).toMatchObject({ running: false, waiting: 0 });
  });
});
