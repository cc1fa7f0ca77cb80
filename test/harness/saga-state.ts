/** Saga states as older code wrote them, for the versioning tests. */
import type { SagaState } from '../../src/domain/saga/saga-state';

/** The same state as the unnumbered version 1 wrote it: no `version` or `planVersion`, settings from before four of them existed. */
export function asVersion1(state: SagaState): Record<string, unknown> {
  const { version: _version, planVersion: _planVersion, ...rest } = structuredClone(state);
  const settings = rest.ctx.settings as Partial<SagaState['ctx']['settings']>;
  delete settings.heartbeatTimeoutMs;
  delete settings.handoff;
  delete settings.passEnv;
  delete (settings.budget as Partial<SagaState['ctx']['settings']['budget']>).onExhausted;
  return rest;
}
