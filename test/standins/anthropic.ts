/**
 * Stand-in of the Anthropic Messages API for Claude Code (`claude -p`). It plays a ModelScript through the
 * CLI's own `Write` and `Bash` tools over `POST /v1/messages` (SSE when `stream: true`, JSON otherwise).
 */
import { mkdir } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import {
  type ModelScript,
  type RecordedRequest,
  type ScriptStep,
  type StandIn,
  scriptUsage,
  startRecordingServer,
  writeSse,
} from './script';

interface ContentBlock {
  type: string;
  [key: string]: unknown;
}

interface MessagesBody {
  model?: string;
  stream?: boolean;
  system?: string | ContentBlock[];
  messages?: Array<{ role: string; content: string | ContentBlock[] }>;
  tools?: Array<{ name?: string }>;
}

const asBody = (body: unknown): MessagesBody =>
  body !== null && typeof body === 'object' ? (body as MessagesBody) : {};

const blocksOf = (content: string | ContentBlock[] | undefined): ContentBlock[] =>
  Array.isArray(content) ? content : [];

const textOf = (content: string | ContentBlock[] | undefined): string =>
  typeof content === 'string'
    ? content
    : blocksOf(content)
        .map((b) => (typeof b.text === 'string' ? b.text : ''))
        .join('\n');

/** The step reached = how many tool results the CLI has sent back so far (kept stateless on purpose). */
const toolResultCount = (body: MessagesBody): number =>
  (body.messages ?? [])
    .filter((m) => m.role === 'user')
    .reduce((n, m) => n + blocksOf(m.content).filter((b) => b.type === 'tool_result').length, 0);

/**
 * Claude Code states its working directory in the environment section of the system prompt (or, with
 * --exclude-dynamic-system-prompt-sections, in the first user message); the Write tool wants absolute paths.
 */
export function workingDirectoryOf(body: MessagesBody): string | undefined {
  const texts = [textOf(body.system), ...(body.messages ?? []).map((m) => textOf(m.content))];
  // The CLI's own label first, so a prompt that happens to say "Working directory:" cannot win.
  for (const label of ['Primary working directory', 'Working directory']) {
    for (const text of texts) {
      const match = new RegExp(`^\\s*-?\\s*${label}:\\s*(/.*)$`, 'm').exec(text);
      if (match) return match[1].trim();
    }
  }
  return undefined;
}

/** Only the agent's main loop offers both tools; side requests (titles, summaries) get plain text. */
const isAgentLoop = (body: MessagesBody): boolean => {
  const names = new Set((body.tools ?? []).map((t) => t.name));
  return names.has('Write') && names.has('Bash');
};

const requestId = (): string =>
  `req_standin${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

function sendError(res: http.ServerResponse, status: number, type: string, message: string): void {
  const id = requestId();
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': id });
  res.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: id }));
}

function sendJson(res: http.ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId() });
  res.end(JSON.stringify(value));
}

function toolUseFor(step: ScriptStep, index: number, cwd: string | undefined): ContentBlock {
  const id = `toolu_standin_${String(index + 1).padStart(2, '0')}`;
  if (step.kind === 'write') {
    const filePath = cwd && !path.isAbsolute(step.path) ? path.join(cwd, step.path) : step.path;
    return { type: 'tool_use', id, name: 'Write', input: { file_path: filePath, content: step.content } };
  }
  return {
    type: 'tool_use',
    id,
    name: 'Bash',
    input: { command: step.command, description: `Run step ${index + 1} of the script` },
  };
}

function reply(script: ModelScript, body: MessagesBody, res: http.ServerResponse): void {
  const usage = scriptUsage(script);
  const done = toolResultCount(body);
  const step = isAgentLoop(body) ? script.steps[done] : undefined;
  const block: ContentBlock = step
    ? toolUseFor(step, done, workingDirectoryOf(body))
    : { type: 'text', text: script.finalText };
  const stopReason = step ? 'tool_use' : 'end_turn';
  const model = body.model ?? 'claude-standin';
  const id = `msg_standin${Date.now().toString(36)}`;
  const fullUsage = {
    input_tokens: usage.input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: usage.cached,
    output_tokens: usage.output,
  };

  if (!body.stream) {
    sendJson(res, {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [block],
      stop_reason: stopReason,
      stop_sequence: null,
      usage: fullUsage,
    });
    return;
  }

  // The text or the tool input arrives as deltas after an empty start block, as the real API streams it.
  const startBlock = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
  const delta =
    block.type === 'text'
      ? { type: 'text_delta', text: block.text }
      : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
  const events = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...fullUsage, output_tokens: 1 },
        },
      },
    },
    {
      event: 'content_block_start',
      data: { type: 'content_block_start', index: 0, content_block: startBlock },
    },
    { event: 'ping', data: { type: 'ping' } },
    { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta } },
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: fullUsage,
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
  writeSse(res, events);
}

/** Rough token count for count_tokens: about four characters a token, as a sensible estimate. */
const estimateTokens = (body: unknown): number =>
  Math.max(1, Math.ceil(JSON.stringify(body ?? '').length / 4));

export async function startAnthropicStandIn(script: ModelScript): Promise<StandIn> {
  return startRecordingServer((req: RecordedRequest, res: http.ServerResponse) => {
    const url = new URL(req.path, 'http://127.0.0.1');
    const body = asBody(req.body);
    const model = body.model ?? 'unknown';

    if (script.fail === 'auth') {
      sendError(res, 401, 'authentication_error', 'invalid x-api-key');
      return;
    }
    if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') {
      if (script.fail === 'model-not-found') sendError(res, 404, 'not_found_error', `model: ${model}`);
      else sendJson(res, { input_tokens: estimateTokens(req.body) });
      return;
    }
    if (req.method === 'POST' && url.pathname === '/v1/messages') {
      if (script.fail === 'model-not-found') sendError(res, 404, 'not_found_error', `model: ${model}`);
      else reply(script, body, res);
      return;
    }
    const modelLookup = /^\/v1\/models\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && modelLookup) {
      const name = decodeURIComponent(modelLookup[1]);
      if (script.fail === 'model-not-found') sendError(res, 404, 'not_found_error', `model: ${name}`);
      else sendJson(res, modelInfo(name));
      return;
    }
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      sendJson(res, { data: [modelInfo('claude-standin')], has_more: false, first_id: null, last_id: null });
      return;
    }
    sendError(res, 404, 'not_found_error', `Not found: ${req.method} ${url.pathname}`);
  });
}

const modelInfo = (id: string) => ({
  type: 'model',
  id,
  display_name: id,
  created_at: '2026-01-01T00:00:00Z',
});

/**
 * Environment that points Claude Code at the stand-in. Env vars suffice: no config file is needed (a fresh
 * HOME without ~/.claude.json runs headless fine), so `home` only has to exist.
 */
export async function claudeEndpoint(standIn: StandIn, home: string): Promise<Record<string, string>> {
  await mkdir(home, { recursive: true });
  return {
    HOME: home,
    ANTHROPIC_BASE_URL: standIn.url,
    ANTHROPIC_API_KEY: 'sk-ant-standin-key',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}
