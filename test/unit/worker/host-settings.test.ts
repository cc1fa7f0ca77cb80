/** The host's settings from the environment: defaults, and a clear error naming a bad variable. */
import { hostActivitySlots, shutdownGraceMs } from '../../../src/worker/host-settings';

describe('host settings', () => {
  test('SAGA_HOST_SLOTS: 16 by default, a whole number of at least 1 when set', () => {
    expect(hostActivitySlots({})).toBe(16);
    expect(hostActivitySlots({ SAGA_HOST_SLOTS: '48' })).toBe(48);
    for (const bad of ['0', '-2', '1.5', 'many'])
      expect(() => hostActivitySlots({ SAGA_HOST_SLOTS: bad })).toThrow(
        `SAGA_HOST_SLOTS must be a whole number of at least 1, got '${bad}'.`,
      );
  });

  test('SAGA_SHUTDOWN_GRACE_MS: 10 s by default, whole milliseconds when set', () => {
    expect(shutdownGraceMs({})).toBe(10_000);
    expect(shutdownGraceMs({ SAGA_SHUTDOWN_GRACE_MS: '0' })).toBe(0);
    expect(() => shutdownGraceMs({ SAGA_SHUTDOWN_GRACE_MS: 'soon' })).toThrow(/SAGA_SHUTDOWN_GRACE_MS/);
  });
});
