import { nextProjectorWait } from '../../../../src/activities/artifacts/projector';

describe("the PROGRESS.md projector's wait between status reads", () => {
  it('is a second after a change, doubles while nothing changes, and stops at 5 s', () => {
    const waits: number[] = [];
    let wait = 1_000;
    for (const changed of [false, false, false, false, false, true, false]) {
      wait = nextProjectorWait(wait, changed);
      waits.push(wait);
    }
    expect(waits).toEqual([2_000, 4_000, 5_000, 5_000, 5_000, 1_000, 2_000]);
  });

  it('keeps a slower pace it was given', () => {
    expect(nextProjectorWait(8_000, false, 8_000)).toBe(8_000);
    expect(nextProjectorWait(8_000, true, 8_000)).toBe(8_000);
  });
});
