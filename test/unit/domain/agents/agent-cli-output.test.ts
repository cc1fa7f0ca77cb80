/**
 * Reading agent CLI output: every case is a real run of the CLI against its stand-in, captured under
 * test/fixtures/agent-cli/<cli>/<case>.json (argv, exit code, stdout, stderr).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  checksRunAfter,
  hopelessRetry,
  readableLine,
  readAgentOutcome,
  type AgentFailureKind,
} from '../../../../src/domain/agents/cli-output';
import type { AgentOutputFormat } from '../../../../src/domain/config/agent-presets';
import { priceTokens } from '../../../../src/domain/agents/usage';
import { PROJECT_ROOT } from '../../../../src/project-root';

interface Capture {
  cli: string;
  exitCode: number;
  stdout: string;
  stderr: string;
  analytics?: string;
}

const ROOT = path.join(PROJECT_ROOT, 'test', 'fixtures', 'agent-cli');
const load = (cli: string, name: string): Capture =>
  JSON.parse(readFileSync(path.join(ROOT, cli, `${name}.json`), 'utf8')) as Capture;

const read = (
  cli: AgentOutputFormat,
  name: string,
  extra: Partial<Parameters<typeof readAgentOutcome>[0]> = {},
) => {
  const c = load(cli, name);
  return readAgentOutcome({
    profile: cli,
    format: cli,
    transcript: `${c.stdout}\n${c.stderr}`,
    exitCode: c.exitCode,
    sideOutput: c.analytics,
    ...extra,
  });
};

/** What each captured case must be read as: failure kind (null = none) and whether a retry may help. */
const EXPECTED: Record<string, Record<string, { kind: AgentFailureKind | null; text?: RegExp }>> = {
  claude: {
    success: { kind: null },
    denied: {
      kind: 'permission-denied',
      text: /^agent claude was denied 2 tool calls: Write\(.*alpha\.txt\), Bash\(node -e/,
    },
    'max-turns': { kind: 'max-turns' },
    auth: { kind: 'not-authenticated', text: /Invalid API key/ },
    'auth-max-retries-0': { kind: 'not-authenticated', text: /Invalid API key/ },
    'model-not-found': { kind: 'model-not-found', text: /issue with the selected model/ },
    'not-authenticated': { kind: 'not-authenticated', text: /Not logged in/ },
  },
  codex: {
    success: { kind: null },
    denied: { kind: 'permission-denied', text: /sandbox \(read-only\)/ },
    auth: { kind: 'not-authenticated', text: /401 Unauthorized/ },
    'model-not-found': { kind: 'model-not-found', text: /gpt-5\.5. does not exist/ },
    'not-authenticated': { kind: 'not-authenticated', text: /OPENAI_API_KEY/ },
  },
  gemini: {
    success: { kind: null },
    denied: { kind: 'permission-denied', text: /denied 2 tool calls: write_file, run_shell_command/ },
    'max-turns': { kind: 'max-turns' },
    auth: { kind: 'not-authenticated', text: /API key not valid/ },
    'model-not-found': { kind: 'model-not-found', text: /is not found for API version/ },
    'not-authenticated': { kind: 'not-authenticated', text: /GEMINI_API_KEY/ },
  },
  opencode: {
    success: { kind: null },
    denied: {
      kind: 'permission-denied',
      text: /^agent opencode was denied 1 tool call: write\(alpha\.txt\)/,
    },
    auth: { kind: 'not-authenticated', text: /401 Incorrect API key/ },
    'model-not-found': { kind: 'model-not-found', text: /stand-in. does not exist/ },
    'not-authenticated': { kind: 'not-authenticated', text: /didn't provide an API key/ },
  },
  // aider exits 0 whatever happens: its errors are only text.
  aider: {
    success: { kind: null },
    auth: { kind: 'not-authenticated', text: /AuthenticationError/ },
    'model-not-found': { kind: 'model-not-found', text: /NotFoundError/ },
    'not-authenticated': { kind: 'not-authenticated', text: /AuthenticationError/ },
  },
};

describe.each(Object.keys(EXPECTED))('%s output', (cli) => {
  test('every captured case is covered by this table', () => {
    const captured = readdirSync(path.join(ROOT, cli)).map((f) => f.replace(/\.json$/, ''));
    expect(captured.sort()).toEqual(Object.keys(EXPECTED[cli]!).sort());
  });

  test.each(Object.entries(EXPECTED[cli]!))('%s', (name, expected) => {
    const outcome = read(cli as AgentOutputFormat, name);
    expect(outcome.failure?.kind ?? null).toBe(expected.kind);
    if (expected.text) expect(outcome.failure?.message).toMatch(expected.text);
    if (expected.kind && !['max-turns', 'cli-error'].includes(expected.kind))
      expect(outcome.failure?.retryable).toBe(false);
    if (outcome.failure) expect(outcome.failure.message).not.toMatch(/\n/);
  });

  test('a successful run: session id and the tokens of its model calls', () => {
    const outcome = read(cli as AgentOutputFormat, 'success');
    // aider has no session; it counts tokens itself (one call), the others report the stand-in's 3 x 1000.
    if (cli === 'aider') {
      expect(outcome.sessionId).toBeNull();
      expect(outcome.usage).toMatchObject({ inputTokens: 2372, outputTokens: 42 });
      expect(outcome.usage?.costUsd).toBeCloseTo(0.007746, 9);
    } else {
      expect(outcome.sessionId).toMatch(/^[\w-]{20,}$/);
      expect(outcome.usage?.inputTokens).toBeGreaterThanOrEqual(3000);
      expect(outcome.usage?.outputTokens).toBeGreaterThanOrEqual(240);
    }
  });
});

describe('readable transcript lines (saga logs, the live view)', () => {
  test.each(['claude', 'codex', 'gemini', 'opencode'] as const)(
    '%s: the tool calls and the answer, no raw JSON',
    (cli) => {
      const c = load(cli, 'success');
      const lines = c.stdout
        .split('\n')
        .map((l) => readableLine(cli, l))
        .filter((l): l is string => Boolean(l?.trim()));
      expect(lines.some((l) => l.startsWith('{'))).toBe(false);
      expect(lines.join('\n')).toMatch(/alpha\.txt/);
      expect(lines.join('\n')).toMatch(/node -e/);
      expect(lines.every((l) => !l.includes('\n'))).toBe(true);
    },
  );

  test('plain text and aider lines stay as they are', () => {
    expect(readableLine('text', '{"type":"x"}')).toBe('{"type":"x"}');
    expect(readableLine('aider', 'Applied edit to alpha.txt')).toBe('Applied edit to alpha.txt');
    expect(readableLine('claude', 'not json')).toBe('not json');
  });
});

describe('cost', () => {
  test("Claude's own cost is taken as it is, not estimated", () => {
    const outcome = read('claude', 'success', { prices: { 'claude-opus-5-5': { input: 100, output: 100 } } });
    expect(outcome.usage?.costUsd).toBeCloseTo(0.018, 6);
    expect(outcome.usage?.costEstimated).toBeUndefined();
  });

  test('Codex names no model: the profile model prices its tokens, cached ones at the cached price', () => {
    const outcome = read('codex', 'success', {
      model: 'gpt-5.5',
      prices: { 'gpt-5.5': { input: 2, output: 16, cached: 0.2 } },
    });
    // 3600 in (600 cached), 240 out.
    expect(outcome.usage).toMatchObject({ inputTokens: 3600, cachedInputTokens: 600, outputTokens: 240 });
    expect(outcome.usage?.costUsd).toBeCloseTo((3000 * 2 + 600 * 0.2 + 240 * 16) / 1e6, 9);
    expect(outcome.usage?.costEstimated).toBe(true);
  });

  test('Gemini: the model that did the work (not the router) is priced; a versioned name finds its entry', () => {
    const outcome = read('gemini', 'success', { prices: { 'gemini-3.8': { input: 1, output: 1 } } });
    expect(outcome.model).toBe('gemini-3.8-flash');
    expect(outcome.usage?.costUsd).toBeCloseTo(3300 / 1e6, 9);
  });

  test('no price known: tokens without a cost, not marked as an estimate', () => {
    const outcome = read('gemini', 'success', { prices: {} });
    expect(outcome.usage).toEqual({ inputTokens: 3000, outputTokens: 300, costUsd: 0 });
  });

  test('priceTokens charges cached input at the cached price, or the input price when none', () => {
    expect(
      priceTokens({ inputTokens: 1e6, outputTokens: 0, cachedInputTokens: 5e5 }, { input: 2, output: 0 }),
    ).toBe(2);
    expect(
      priceTokens(
        { inputTokens: 1e6, outputTokens: 1e6, cachedInputTokens: 5e5 },
        { input: 2, output: 8, cached: 1 },
      ),
    ).toBe(1 + 0.5 + 8);
  });
});

describe('diagnosis', () => {
  test('a denied tool call still lets the checks decide; an auth failure does not', () => {
    expect(checksRunAfter(read('claude', 'denied').failure)).toBe(true);
    expect(checksRunAfter(read('claude', 'not-authenticated').failure)).toBe(false);
    expect(checksRunAfter(null)).toBe(true);
  });

  test("a CLI retrying a refused key is stopped at the first retry line (Claude's api_retry, Codex's reconnect)", () => {
    const claudeRetry = JSON.stringify({
      type: 'system',
      subtype: 'api_retry',
      attempt: 1,
      max_retries: 10,
      error_status: 401,
      error: 'authentication_failed',
    });
    expect(hopelessRetry('claude', claudeRetry)).toBe(
      'the API answered 401 authentication_failed; stopped instead of retrying',
    );
    expect(hopelessRetry('claude', claudeRetry.replace('401', '529'))).toBeNull();
    const codexLine = load('codex', 'auth')
      .stdout.split('\n')
      .find((l) => l.includes('Reconnecting'))!;
    expect(hopelessRetry('codex', codexLine)).toMatch(/^unexpected status 401 Unauthorized; stopped/);
    expect(hopelessRetry('gemini', claudeRetry)).toBeNull();
    expect(hopelessRetry('claude', 'plain text 401')).toBeNull();
  });

  test('the stop reason becomes a not-authenticated failure', () => {
    const outcome = readAgentOutcome({
      profile: 'claude',
      format: 'claude',
      transcript: '',
      exitCode: null,
      stoppedFor: 'the API answered 401; stopped instead of retrying',
    });
    expect(outcome.failure).toEqual({
      kind: 'not-authenticated',
      retryable: false,
      message:
        "agent claude is not authenticated (the API answered 401; stopped instead of retrying) — set its API key or log in; run 'saga doctor --agent claude'",
    });
  });

  test('plain-text profiles: a failed run with a recognisable error text is diagnosed, a clean one is not', () => {
    const base = { profile: 'mine', format: 'text' as const };
    expect(
      readAgentOutcome({ ...base, transcript: 'Error: 401 Unauthorized', exitCode: 1 }).failure?.kind,
    ).toBe('not-authenticated');
    expect(readAgentOutcome({ ...base, transcript: 'tests failed', exitCode: 1 }).failure).toBeNull();
    expect(
      readAgentOutcome({ ...base, transcript: 'mentions 401 in passing', exitCode: 0 }).failure,
    ).toBeNull();
  });
});

describe("a plain-text profile printing Claude's JSON", () => {
  const asText = (transcript: string) =>
    readAgentOutcome({ profile: 'mine', format: 'text', transcript, exitCode: 0 });

  test("stream-json and json envelopes are read as Claude's: answer, session and usage", () => {
    const stream = load('claude', 'success');
    const transcript = `${stream.stdout}\n${stream.stderr}`;
    const asClaude = readAgentOutcome({ profile: 'mine', format: 'claude', transcript, exitCode: 0 });
    expect(asText(transcript)).toEqual({ ...asClaude, readAs: 'claude' });
    expect(asClaude.answer).toBeTruthy();

    const envelope = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'CRITICAL:\n- a finding\n',
      session_id: 'abc',
      total_cost_usd: 0.25,
      usage: { input_tokens: 1200, output_tokens: 80 },
    });
    expect(asText(`wrapper starting\n${envelope}\n`)).toMatchObject({
      readAs: 'claude',
      answer: 'CRITICAL:\n- a finding\n',
      sessionId: 'abc',
      usage: { inputTokens: 1200, outputTokens: 80, costUsd: 0.25 },
    });
  });

  test('other JSON and plain text stay plain text (stdout is the answer)', () => {
    for (const transcript of [
      'CRITICAL:\n- x\n',
      '{"type":"result","result":"just data"}',
      '{"status":"ok"}',
    ]) {
      expect(asText(transcript)).toMatchObject({ readAs: 'text', answer: null, sessionId: null });
    }
  });
});
