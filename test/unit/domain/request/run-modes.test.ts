/**
 * Intake's run modes: subagents unless the agent profile says it cannot dispatch them, parallel lanes with
 * any profile, and each refused request recorded (manifest) and announced (log).
 */
import { parseFlags } from '../../../../src/domain/request/flags';
import { resolveRunModes } from '../../../../src/domain/request/run-modes';

describe('run modes', () => {
  test('no flags: inline and sequential, nothing refused', () => {
    const modes = resolveRunModes(parseFlags('Add a greeting', {}), {
      profileName: 'a',
      subagentDispatch: true,
    });
    expect(modes.label).toBe('inline; sequential');
    expect(modes.parallel.lanes).toBe(1);
    expect(modes.degradations).toEqual([]);
    expect(modes.notes).toEqual([]);
  });

  test('subagents and parallel lanes when the profile can dispatch', () => {
    const flags = parseFlags('--subagents --parallel=2 Add a greeting', {});
    const modes = resolveRunModes(flags, { profileName: 'a', subagentDispatch: true });
    expect(modes.mode.mode).toBe('subagents');
    expect(modes.parallel.lanes).toBe(2);
    expect(modes.label).toBe('subagents; parallel (2 lanes)');
    expect(modes.notes).toEqual([]);
  });

  test('a profile that cannot dispatch refuses --subagents loudly, and still runs the lanes', () => {
    const flags = parseFlags('--subagents --parallel=3 Add a greeting', {});
    const modes = resolveRunModes(flags, { profileName: 'a', subagentDispatch: false });
    expect(modes.mode.degraded).toBe(true);
    expect(modes.parallel.lanes).toBe(3);
    expect(modes.label).toBe('inline (subagents-unavailable); parallel (3 lanes)');
    expect(modes.degradations.map((d) => d.title)).toEqual([
      'Refused --subagents: inline (subagents-unavailable)',
    ]);
    expect(modes.notes).toEqual([modes.mode.announcement]);
  });

  test('--parallel alone runs its lanes inline', () => {
    const modes = resolveRunModes(parseFlags('--parallel=3 Add a greeting', {}), {
      profileName: 'codex',
      subagentDispatch: true,
    });
    expect(modes.label).toBe('inline; parallel (3 lanes)');
    expect(modes.notes).toEqual([]);
  });

  test('a saga started under the earlier rule keeps it: both refused, recorded and announced', () => {
    const flags = parseFlags('--subagents --parallel=2 Add a greeting', {});
    const modes = resolveRunModes(flags, { profileName: 'a', subagentDispatch: false }, false);
    expect(modes.label).toBe('inline (subagents-unavailable); sequential (parallel-requires-subagents)');
    expect(modes.degradations.map((d) => d.title)).toEqual([
      'Refused --subagents: inline (subagents-unavailable)',
      'Refused --parallel: sequential (parallel-requires-subagents)',
    ]);
    expect(modes.notes).toEqual([modes.mode.announcement, modes.parallel.announcement]);
  });
});
