/** A saga carries its newest answers into the next run, not every answer it ever got. */
import { ANSWERS_CARRIED, carriedAnswers } from '../../../../src/domain/saga/interactions';
import type { Answer } from '../../../../src/domain/contract/state';

const answer = (i: number): Answer => ({
  interactionId: `q-${i}`,
  choice: 'yes',
  choiceIndex: 0,
  text: 'x'.repeat(1_000),
  user: 'ana',
  answeredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
});

test('the newest answers, oldest first, at most ANSWERS_CARRIED', () => {
  const few = [answer(1), answer(2)];
  expect(carriedAnswers(few)).toEqual(few);
  const many = Array.from({ length: ANSWERS_CARRIED + 50 }, (_, i) => answer(i));
  const kept = carriedAnswers(many);
  expect(kept).toHaveLength(ANSWERS_CARRIED);
  expect(kept[0]!.interactionId).toBe('q-50');
  expect(kept.at(-1)!.interactionId).toBe(`q-${ANSWERS_CARRIED + 49}`);
});
