/**
 * The incremental reader of an agent CLI's JSON stream (the live view and crash resume), fed the
 * captured real runs of test/fixtures/agent-cli/ one line at a time: the session id is known from the line
 * that names it, tokens and cost grow while the run goes on, and at the end they agree with the reader of
 * the whole transcript.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { readAgentOutcome } from '../../../../src/domain/agents/cli-output';
import type { AgentOutputFormat } from '../../../../src/domain/config/agent-presets';
import {
  createAgentStreamReader,
  type AgentStreamSnapshot,
} from '../../../../src/domain/agents/agent-stream';
import { PROJECT_ROOT } from '../../../../src/project-root';

interface Capture {
  exitCode: number;
  stdout: string;
  stderr: string;
}
const load = (cli: string, name: string): Capture =>
  JSON.parse(
    readFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'agent-cli', cli, `${name}.json`), 'utf8'),
  ) as Capture;

/** Every snapshot, one after each line of the capture. */
function follow(cli: AgentOutputFormat, name: string, prices = {}): AgentStreamSnapshot[] {
  const c = load(cli, name);
  const reader = createAgentStreamReader(cli, { prices });
  return `${c.stdout}\n${c.stderr}`.split('\n').map((line) => {
    reader.read(line);
    return reader.snapshot();
  });
}

const CLIS: AgentOutputFormat[] = ['claude', 'codex', 'gemini', 'opencode'];

describe.each(CLIS)('%s stream, read line by line', (cli) => {
  test('ends where the whole-transcript reader ends: session id and tokens', () => {
    const snapshots = follow(cli, 'success');
    const c = load(cli, 'success');
    const whole = readAgentOutcome({
      profile: cli,
      format: cli,
      transcript: `${c.stdout}\n${c.stderr}`,
      exitCode: c.exitCode,
    });
    const last = snapshots[snapshots.length - 1]!;
    expect(last.sessionId).toBe(whole.sessionId);
    expect(whole.sessionId).toMatch(/\S{8,}/);
    expect(last.usage?.inputTokens).toBe(whole.usage?.inputTokens);
    expect(last.usage?.outputTokens).toBe(whole.usage?.outputTokens);
    if (cli === 'claude' || cli === 'opencode')
      expect(last.usage?.costUsd).toBeCloseTo(whole.usage!.costUsd, 9);
  });

  test('knows the session id from the first line that names it, long before the end', () => {
    const snapshots = follow(cli, 'success');
    const first = snapshots.findIndex((s) => s.sessionId !== null);
    expect(first).toBeGreaterThanOrEqual(0);
    expect(first).toBeLessThan(snapshots.length / 2);
  });

  test('lines that are not JSON, and other formats, are ignored', () => {
    const reader = createAgentStreamReader(cli);
    reader.read('plain text {not json');
    reader.read('');
    expect(reader.snapshot()).toEqual({ sessionId: null, model: null, usage: null });
    const text = createAgentStreamReader('text');
    for (const line of load(cli, 'success').stdout.split('\n')) text.read(line);
    expect(text.snapshot().usage).toBeNull();
  });
});

test('claude: tokens grow per assistant message (counted once each), cost estimated until the result', () => {
  const snapshots = follow('claude', 'success', { 'claude-opus-5-5': { input: 5, output: 25 } });
  const growing = snapshots
    .map((s) => s.usage?.inputTokens ?? 0)
    .filter((n, i, all) => n > 0 && n !== all[i - 1]);
  // Three model calls of 1000 input tokens each, then the final result with the same total.
  expect(growing).toEqual([1000, 2000, 3000]);
  const beforeResult = snapshots[snapshots.findIndex((s) => s.usage?.inputTokens === 3000)]!;
  expect(beforeResult.usage).toMatchObject({ costEstimated: true });
  expect(beforeResult.usage!.costUsd).toBeGreaterThan(0);
  const last = snapshots[snapshots.length - 1]!;
  expect(last.usage?.costEstimated).toBeUndefined();
  expect(last.usage?.costUsd).toBeCloseTo(0.018, 9);
});

test('opencode: every finished step adds its tokens and cost', () => {
  const steps = [...new Set(follow('opencode', 'success').map((s) => s.usage?.inputTokens ?? 0))];
  expect(steps.length).toBeGreaterThanOrEqual(3);
  expect(steps).toEqual([...steps].sort((a, b) => a - b));
});

test('codex: tokens come with turn.completed, priced from the table when the profile names the model', () => {
  const c = load('codex', 'success');
  const reader = createAgentStreamReader('codex', {
    model: 'gpt-5.5',
    prices: { 'gpt-5.5': { input: 2, output: 16, cached: 0.2 } },
  });
  for (const line of c.stdout.split('\n')) reader.read(line);
  expect(reader.snapshot().usage).toMatchObject({ inputTokens: 3600, costEstimated: true });
  expect(reader.snapshot().usage!.costUsd).toBeGreaterThan(0);
});
