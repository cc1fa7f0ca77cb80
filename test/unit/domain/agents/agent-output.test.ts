import { extractReport, lastJsonBlock, parseUsage } from '../../../../src/domain/agents/agent-output';

const fence = (body: string) => '```json\n' + body + '\n```';

describe('extractReport', () => {
  test('the report file wins over stdout', () => {
    expect(extractReport('{"status":"blocked","reason":"no API"}', fence('{"status":"done"}'))).toEqual({
      report: { status: 'blocked', reason: 'no API' },
      error: null,
    });
  });

  test('an empty or whitespace report file falls back to the LAST json block of stdout', () => {
    const stdout = ['thinking...', fence('{"n": 1}'), 'more text', fence('{"n": 2}'), 'bye'].join('\n');
    expect(extractReport('', stdout)).toEqual({ report: { n: 2 }, error: null });
    expect(extractReport(' \n', stdout)).toEqual({ report: { n: 2 }, error: null });
    expect(extractReport(null, stdout)).toEqual({ report: { n: 2 }, error: null });
  });

  test('other fenced languages are not answers', () => {
    expect(extractReport(null, '```js\n{"a":1}\n```\n```text\n{}\n```')).toEqual({
      report: null,
      error: null,
    });
  });

  test('nothing given is no report and no error', () => {
    expect(extractReport(null, 'just logs\n')).toEqual({ report: null, error: null });
  });

  test('invalid JSON in the report file is an error saying where', () => {
    const { report, error } = extractReport('{"status": ', '');
    expect(report).toBeNull();
    expect(error).toMatch(/^the report file is not valid JSON: /);
  });

  test('a JSON value that is not an object is refused', () => {
    expect(extractReport('[1,2]', '').error).toBe('the report file must hold one JSON object, got an array');
    expect(extractReport(null, fence('"hi"')).error).toBe(
      'the last ```json block of stdout must hold one JSON object, got a string',
    );
  });

  test("reads the json block inside Claude's --output-format json envelope", () => {
    const answer = 'Here is the plan:\n' + fence('{"milestones": []}') + '\nDone.';
    const envelope = JSON.stringify({ type: 'result', result: answer, usage: { input_tokens: 5 } });
    expect(extractReport('', `${envelope}\n`)).toEqual({ report: { milestones: [] }, error: null });
  });

  test('lastJsonBlock tolerates CRLF and text after the language tag', () => {
    expect(lastJsonBlock('```json \r\n{"a":1}\r\n```')).toBe('{"a":1}');
    expect(lastJsonBlock('no block')).toBeNull();
  });
});

describe('parseUsage', () => {
  test("Claude Code's --output-format json result", () => {
    const text = JSON.stringify({
      type: 'result',
      subtype: 'success',
      result: 'ok',
      total_cost_usd: 0.0421,
      usage: { input_tokens: 1200, output_tokens: 345, cache_read_input_tokens: 99 },
    });
    expect(parseUsage(text)).toEqual({ inputTokens: 1200, outputTokens: 345, costUsd: 0.0421 });
  });

  test('the last result line of stream output counts', () => {
    const lines = [
      '{"type":"system","subtype":"init"}',
      'plain log line',
      '{"type":"result","usage":{"input_tokens":10,"output_tokens":2},"total_cost_usd":0.5}',
    ].join('\n');
    expect(parseUsage(lines)).toEqual({ inputTokens: 10, outputTokens: 2, costUsd: 0.5 });
  });

  test('Codex "tokens used: N" lines (the last one counts)', () => {
    expect(parseUsage('working\ntokens used: 1,234\nmore\n[2025-01-01] tokens used: 5,678\n')).toEqual({
      inputTokens: 5678,
      outputTokens: 0,
      costUsd: 0,
    });
  });

  test('Codex input/output split lines', () => {
    expect(parseUsage('Token usage: total=1500 input=1200 (+ 300 cached) output=300\n')).toEqual({
      inputTokens: 1200,
      outputTokens: 300,
      costUsd: 0,
    });
  });

  test('null when nothing is reported', () => {
    expect(parseUsage('hello\n{"type":"note"}\n')).toBeNull();
    expect(parseUsage('')).toBeNull();
  });
});
