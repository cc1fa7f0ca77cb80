/**
 * Stand-in of the OpenAI Chat Completions API (`POST /v1/chat/completions`) for opencode (custom
 * `@ai-sdk/openai-compatible` provider) and aider (litellm `openai/<model>`).
 *
 * Requests that offer `tools` (opencode's agent loop) get one tool call per script step: 'write' calls the
 * offered `write` tool with `{filePath, content}`, 'shell' the `bash` tool with `{command, description}` (the
 * argument names are taken from the tool's JSON schema when it declares them).
 *
 * Requests without `tools` are answered in TEXT, because aider has no tool calling: every 'write' step becomes
 * one SEARCH/REPLACE block of aider's `diff` edit format (empty SEARCH = new file) and every 'shell' step a
 * ```bash block (aider only offers to run those; `--yes-always` declines). Once the conversation already holds
 * that answer (aider re-asks after a failed edit or test), the reply is the script's finalText. opencode's
 * side requests (session title) carry no tools either; they get the same text, which opencode only uses as the
 * session title.
 */
import { mkdir, writeFile } from 'node:fs/promises';
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

interface ChatMessage {
  role?: string;
  content?: unknown;
}

interface ChatTool {
  type?: string;
  function?: { name?: string; parameters?: { properties?: Record<string, unknown> } };
}

interface ChatBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: ChatMessage[];
  tools?: ChatTool[];
}

interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** What one completion carries: either a tool call or text. */
type Answer = { kind: 'tool'; call: ToolCall } | { kind: 'text'; text: string };

/** The model id `GET /v1/models` lists; the CLIs are configured with this name by the endpoint helpers. */
export const CHAT_STANDIN_MODEL = 'stand-in';

const asBody = (body: unknown): ChatBody =>
  body !== null && typeof body === 'object' ? (body as ChatBody) : {};

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p: unknown) =>
        p !== null && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
          ? (p as { text: string }).text
          : '',
      )
      .join('');
  }
  return '';
};

const suffix = (): string => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** Aider's `diff` edit format: path line, fence, SEARCH/REPLACE markers; an empty SEARCH creates the file. */
export function aiderEditBlock(filePath: string, content: string): string {
  const body = content.endsWith('\n') ? content.slice(0, -1) : content;
  // A longer fence when the file itself contains one, so the block stays parseable.
  const fence = content.includes('```') ? '````' : '```';
  return [filePath, fence, '<<<<<<< SEARCH', '=======', body, '>>>>>>> REPLACE', fence].join('\n');
}

/** The whole script as one aider reply: the edits, then the commands it may offer to run. */
export function aiderReply(script: ModelScript): string {
  const parts = ['Here are the changes.'];
  for (const step of script.steps) {
    if (step.kind === 'write') parts.push(aiderEditBlock(step.path, step.content));
  }
  const commands = script.steps.filter((s) => s.kind === 'shell').map((s) => s.command);
  if (commands.length > 0) parts.push(['```bash', ...commands, '```'].join('\n'));
  return parts.join('\n\n');
}

/** Name of an offered tool: the first candidate the CLI declares, else the first candidate. */
function toolName(tools: ChatTool[], candidates: string[]): string {
  const offered = new Set(tools.map((t) => t.function?.name));
  return candidates.find((c) => offered.has(c)) ?? candidates[0];
}

function declaredProps(tools: ChatTool[], name: string): Set<string> {
  const tool = tools.find((t) => t.function?.name === name);
  return new Set(Object.keys(tool?.function?.parameters?.properties ?? {}));
}

function toolCallFor(step: ScriptStep, index: number, tools: ChatTool[]): ToolCall {
  const id = `call_standin_${String(index + 1).padStart(2, '0')}`;
  if (step.kind === 'write') {
    const name = toolName(tools, ['write', 'write_file']);
    const props = declaredProps(tools, name);
    const pathKey = ['filePath', 'file_path', 'path'].find((k) => props.has(k)) ?? 'filePath';
    const args = { [pathKey]: step.path, content: step.content };
    return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
  }
  const name = toolName(tools, ['bash', 'shell']);
  // opencode's bash tool requires a short description next to the command.
  const args: Record<string, string> = { command: step.command };
  if (declaredProps(tools, name).has('description') || name === 'bash') args.description = 'Run the command';
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}

/** The step reached = how many tool results the CLI has sent back (kept stateless on purpose). */
const toolResultCount = (body: ChatBody): number =>
  (body.messages ?? []).filter((m) => m.role === 'tool').length;

function answerFor(script: ModelScript, body: ChatBody): Answer {
  const tools = body.tools ?? [];
  if (tools.length === 0) {
    const edits = aiderReply(script);
    const answered = (body.messages ?? []).some((m) => m.role === 'assistant' && textOf(m.content) === edits);
    return { kind: 'text', text: answered || script.steps.length === 0 ? script.finalText : edits };
  }
  const index = toolResultCount(body);
  const step = script.steps[index];
  return step
    ? { kind: 'tool', call: toolCallFor(step, index, tools) }
    : { kind: 'text', text: script.finalText };
}

function usageOf(script: ModelScript): Record<string, unknown> {
  const u = scriptUsage(script);
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: u.cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  };
}

function streamReply(script: ModelScript, body: ChatBody, answer: Answer, res: http.ServerResponse): void {
  const base = {
    id: `chatcmpl-standin${suffix()}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? CHAT_STANDIN_MODEL,
    system_fingerprint: 'fp_standin',
  };
  const withUsage = body.stream_options?.include_usage === true;
  // With include_usage (asked by opencode, not by aider) every chunk carries `usage: null` and one last
  // chunk with no choices the numbers, like the real API; without it no usage is sent at all.
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(withUsage ? { usage: null } : {}),
  });
  const events: Array<{ data: unknown }> = [];
  if (answer.kind === 'tool') {
    const { id, type, function: fn } = answer.call;
    // Name first with empty arguments, then the arguments, as the real stream splits them.
    events.push({
      data: chunk(
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ index: 0, id, type, function: { name: fn.name, arguments: '' } }],
        },
        null,
      ),
    });
    events.push({ data: chunk({ tool_calls: [{ index: 0, function: { arguments: fn.arguments } }] }, null) });
    events.push({ data: chunk({}, 'tool_calls') });
  } else {
    events.push({ data: chunk({ role: 'assistant', content: '' }, null) });
    events.push({ data: chunk({ content: answer.text }, null) });
    events.push({ data: chunk({}, 'stop') });
  }
  if (withUsage) events.push({ data: { ...base, choices: [], usage: usageOf(script) } });
  events.push({ data: '[DONE]' });
  writeSse(res, events);
}

function jsonReply(script: ModelScript, body: ChatBody, answer: Answer, res: http.ServerResponse): void {
  const message =
    answer.kind === 'tool'
      ? { role: 'assistant', content: null, tool_calls: [answer.call], refusal: null }
      : { role: 'assistant', content: answer.text, refusal: null };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: `chatcmpl-standin${suffix()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model ?? CHAT_STANDIN_MODEL,
      system_fingerprint: 'fp_standin',
      choices: [
        {
          index: 0,
          message,
          logprobs: null,
          finish_reason: answer.kind === 'tool' ? 'tool_calls' : 'stop',
        },
      ],
      usage: usageOf(script),
    }),
  );
}

function sendError(res: http.ServerResponse, status: number, message: string, code: string | null): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_standin${suffix()}` });
  res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } }));
}

/** The real API's answer when no key is sent at all (a CLI run with no key configured). */
const NO_KEY_MESSAGE =
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer " +
  'auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (i.e. username: YOUR_KEY) when ' +
  'using Basic auth. You can obtain an API key from https://platform.openai.com/account/api-keys.';

export async function startOpenAIChatStandIn(script: ModelScript): Promise<StandIn> {
  return startRecordingServer((req: RecordedRequest, res: http.ServerResponse) => {
    const { pathname } = new URL(req.path, 'http://127.0.0.1');
    const bearer = /^Bearer\s+(\S+)/i.exec(String(req.headers.authorization ?? ''));
    if (!bearer) {
      sendError(res, 401, NO_KEY_MESSAGE, null);
      return;
    }
    if (script.fail === 'auth') {
      sendError(res, 401, 'Incorrect API key provided', 'invalid_api_key');
      return;
    }
    // Base URLs are given with /v1; accept the bare paths too in case a client drops it.
    if (req.method === 'GET' && (pathname === '/v1/models' || pathname === '/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: [{ id: CHAT_STANDIN_MODEL, object: 'model', created: 0, owned_by: 'standin' }],
        }),
      );
      return;
    }
    if (req.method === 'POST' && (pathname === '/v1/chat/completions' || pathname === '/chat/completions')) {
      const body = asBody(req.body);
      if (script.fail === 'model-not-found') {
        sendError(res, 404, `The model \`${body.model ?? 'unknown'}\` does not exist`, 'model_not_found');
        return;
      }
      const answer = answerFor(script, body);
      if (body.stream) streamReply(script, body, answer, res);
      else jsonReply(script, body, answer, res);
      return;
    }
    sendError(res, 404, `Invalid URL (${req.method} ${pathname})`, 'unknown_url');
  });
}

/** The env var the opencode provider reads its key from (`{env:...}` in the config); unset = no key sent. */
export const OPENCODE_STANDIN_KEY_VAR = 'STANDIN_API_KEY';

/**
 * Environment that points `opencode run` at the stand-in. The provider goes in OPENCODE_CONFIG_CONTENT: a
 * custom provider on `@ai-sdk/openai-compatible` (bundled in the binary, nothing downloaded) because the
 * built-in `openai` provider speaks the Responses API. The model carries a price so `step_finish.cost` is
 * non-zero. Files are needed for one thing only: opencode starts a background `npm install
 * @opencode-ai/plugin` (~6 s, ~95 MB under HOME) in its global config dir unless that dir already has a
 * node_modules folder and a package-lock.json naming the package; both are written here, empty.
 */
export async function opencodeEndpoint(standIn: StandIn, home: string): Promise<Record<string, string>> {
  const configDir = path.join(home, '.config', 'opencode');
  await mkdir(path.join(configDir, 'node_modules'), { recursive: true });
  const lock = { lockfileVersion: 3, packages: { '': { dependencies: { '@opencode-ai/plugin': '*' } } } };
  await writeFile(path.join(configDir, 'package-lock.json'), JSON.stringify(lock, null, 2));
  const config = {
    $schema: 'https://opencode.ai/config.json',
    model: `standin/${CHAT_STANDIN_MODEL}`,
    share: 'disabled',
    autoupdate: false,
    provider: {
      standin: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Stand-in',
        options: { baseURL: `${standIn.url}/v1`, apiKey: `{env:${OPENCODE_STANDIN_KEY_VAR}}` },
        models: {
          [CHAT_STANDIN_MODEL]: {
            name: 'Stand-in',
            // USD per million tokens.
            cost: { input: 3, output: 15, cache_read: 0.3 },
            limit: { context: 200000, output: 8000 },
          },
        },
      },
    },
  };
  return {
    HOME: home,
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    [OPENCODE_STANDIN_KEY_VAR]: 'sk-standin-key',
    // models.dev is unreachable here: fetching it costs ~1.5 s per run and only logs an error.
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  };
}

/**
 * Environment that points aider at the stand-in: litellm's `openai/<model>` provider reads OPENAI_API_BASE and
 * OPENAI_API_KEY, AIDER_MODEL picks the model (so the preset argv needs no --model). One file: aider's cached
 * price/context list (~/.aider/caches/model_prices_and_context_window.json). Without a fresh, NON-empty copy
 * aider tries to download it at start (unreachable here); this copy holds just the stand-in model, with a
 * price so the analytics log carries a cost. LITELLM_LOCAL_MODEL_COST_MAP stops litellm's own download.
 */
export async function aiderEndpoint(standIn: StandIn, home: string): Promise<Record<string, string>> {
  const caches = path.join(home, '.aider', 'caches');
  await mkdir(caches, { recursive: true });
  const prices = {
    [`openai/${CHAT_STANDIN_MODEL}`]: {
      max_input_tokens: 200000,
      max_output_tokens: 8000,
      input_cost_per_token: 0.000003,
      output_cost_per_token: 0.000015,
      litellm_provider: 'openai',
      mode: 'chat',
    },
  };
  await writeFile(path.join(caches, 'model_prices_and_context_window.json'), JSON.stringify(prices, null, 2));
  return {
    HOME: home,
    OPENAI_API_BASE: `${standIn.url}/v1`,
    OPENAI_API_KEY: 'sk-standin-key',
    AIDER_MODEL: `openai/${CHAT_STANDIN_MODEL}`,
    AIDER_CHECK_UPDATE: 'false',
    AIDER_ANALYTICS: 'false',
    LITELLM_LOCAL_MODEL_COST_MAP: 'True',
  };
}
