/**
 * Many sagas on one host with few activity slots: each saga's PROGRESS.md projector (a long activity, asleep
 * between reads) runs on the host's projector queue, so it never holds a slot the sagas' agents and git steps
 * wait for. With the projectors on the host queue, two of them would take both slots and every saga would
 * stall for the projector's 20 minutes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createFleetRepo, planTask, startApprovedSaga } from '../../harness/fleet-saga';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../harness/saga-env';
import { waitFor } from '../../harness/wait';

const SAGAS = 3;
const HOST_SLOTS = 2;

function twoTaskPlan(name: string) {
  return {
    name,
    problem: 'Two small files.',
    scope: { in: ['m1/'], out: [], delegated: [] },
    exit_criteria: [{ id: 'E1', text: 'both files exist', check: 'test -f m1/a.txt && test -f m1/b.txt' }],
    milestones: [
      {
        id: 1,
        slug: 'files',
        title: 'Files',
        depends_on: [],
        goal: 'Two files.',
        validation: [{ text: 'files exist', check: 'test -f m1/b.txt' }],
        tasks: [
          planTask(1, 'a', ['m1/a.txt'], 'test -f m1/a.txt'),
          planTask(2, 'b', ['m1/b.txt'], 'test -f m1/b.txt'),
        ],
      },
    ],
  };
}

const script = {
  tasks: {
    '1.1': { attempts: [{ files: { 'm1/a.txt': 'a\n' } }] },
    '1.2': { attempts: [{ files: { 'm1/b.txt': 'b\n' } }] },
  },
};

describe('host activity slots', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('slots');
    await env.startWorkers({ hostActivitySlots: HOST_SLOTS });
  });
  afterAll(async () => env.close());

  test(`${SAGAS} sagas on a host with ${HOST_SLOTS} slots all reach acceptance, PROGRESS.md kept current`, async () => {
    const names = Array.from({ length: SAGAS }, (_, i) => `slots-${i + 1}`);
    const inputs = await Promise.all(
      names.map((name) => {
        const { repo, planFile } = createFleetRepo(env.tmp(name), { plan: twoTaskPlan(name), script });
        return startApprovedSaga(env, { repo, planFile, name, args: '--subagents --parallel=2 Two files' });
      }),
    );
    for (const input of inputs) {
      const done = await waitForPending(env, input.name, 'acceptance-1', 120_000);
      expect(done.milestones[0]!.tasks.map((t) => t.status)).toEqual(['integrated', 'integrated']);
      // Only the projector writes PROGRESS.md while the saga waits for acceptance.
      const progress = path.join(input.sagaDir, 'PROGRESS.md');
      await waitFor(
        `${input.name}'s PROGRESS.md with its milestone integrated`,
        () => /### Milestone 1: Files — integrated/.test(readFileSync(progress, 'utf8')),
        20_000,
      );
    }
  }, 300_000);
});
