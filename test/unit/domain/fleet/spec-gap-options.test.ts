/**
 * The options an agent offers with a spec gap (untrusted text: capped, cleaned, labelled) and the question
 * they make; the auto-pick notice's log line read back as its block.
 */
import { gapClarification, specGapQuestion } from '../../../../src/domain/fleet/blocked-report';
import { gapOptionsOf } from '../../../../src/domain/fleet/spec-gap-options';
import {
  autoPickLogLine,
  autoPickNotice,
  autoPickNoticeFromLog,
} from '../../../../src/domain/planning/auto-pick-notice';
import { parseFlags } from '../../../../src/domain/request/flags';

const task = { id: '1.2', key: 'm1t2', title: 'Dates', delegations: 1 };

describe('spec gap options', () => {
  test('a report without usable options offers none (the old question)', () => {
    for (const report of [
      null,
      { status: 'blocked' },
      { options: 'ISO' },
      { options: [] },
      { options: [1, null, '  ', '\u001b[0m'] },
    ])
      expect(gapOptionsOf(report as Record<string, unknown> | null)).toBeNull();
    expect(specGapQuestion(task, 'which format?', null)).toMatchObject({
      options: ['answer', 'skip', 'abort'],
      recommended: 0,
    });
  });

  test('recommended must name a kept option by its index, else none is recommended', () => {
    const options = ['ISO', 'iso', 'RFC'];
    expect(gapOptionsOf({ options, recommended: 2 })).toEqual({
      options: ['[A] ISO', '[B] RFC'],
      recommended: 1,
    });
    // The duplicate it points at was dropped; out of range; not an integer.
    for (const recommended of [1, 5, -1, 0.5, '0', null])
      expect(gapOptionsOf({ options, recommended })?.recommended).toBeNull();
  });

  test('newlines and controls go; the question keeps the saga’s own answers after the agent’s', () => {
    const offered = gapOptionsOf({ options: ['Use\nISO\t8601\u0007', 'RFC 2822'], recommended: 0 })!;
    expect(offered.options).toEqual(['[A] Use ISO 8601', '[B] RFC 2822']);
    const question = specGapQuestion(task, 'which format?', offered);
    expect(question).toMatchObject({
      options: ['[A] Use ISO 8601', '[B] RFC 2822', 'answer', 'skip', 'abort'],
      recommended: 0,
      textRequiredFor: ['answer'],
    });
    expect(question.prompt).toContain('Its agent offers 2 option(s) ([A]–[B]; it recommends [A])');
  });

  test('the clarification: the picked option (with a note), or the user’s own text', () => {
    expect(gapClarification({ choice: '[B] RFC 2822' })).toBe('RFC 2822');
    expect(gapClarification({ choice: '[B] RFC 2822', text: 'UTC only' })).toBe('RFC 2822 (UTC only)');
    expect(gapClarification({ choice: 'answer', text: 'Unix seconds' })).toBe('Unix seconds');
  });
});

describe('the auto-pick notice', () => {
  test('its log line reads back as the block, with or without the log’s time', () => {
    const input = {
      name: 'n',
      sagaDir: '/s/n',
      checkpoint: 'task-1.1',
      flags: parseFlags('--autonomous Ship it', { quality_locked: true }),
    };
    const block = autoPickNotice(input);
    expect(block[3]).toBe(
      '  Override: interrupt this saga (saga cancel n) and re-run without one of the flags (pass --no-quality-locked to opt out of the .sage/config.yaml default for one run; omit --autonomous to disable the flag).',
    );
    expect(autoPickNoticeFromLog(autoPickLogLine(input))).toEqual(block);
    expect(autoPickNoticeFromLog(`2026-12-06T03:00:00.000Z ${autoPickLogLine(input)}`)).toEqual(block);
    expect(autoPickNoticeFromLog('2026-12-06T03:00:00.000Z Review of plan, iteration 1: PASS')).toBeNull();
  });
});
