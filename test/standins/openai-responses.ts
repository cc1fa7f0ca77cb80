/**
 * Stand-in of the OpenAI Responses API for the Codex CLI (`codex exec`). It plays a ModelScript through the
 * CLI's own tools over `POST /v1/responses` (always SSE): a 'write' step is a `custom_tool_call` to
 * `apply_patch` carrying a V4A patch, a 'shell' step a `function_call` to `exec_command` with `{"cmd": ...}`.
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

interface InputItem {
  type?: string;
  [key: string]: unknown;
}

interface ResponsesBody {
  model?: string;
  stream?: boolean;
  input?: string | InputItem[];
  tools?: Array<{ type?: string; name?: string }>;
}

type OutputItem = Record<string, unknown> & { type: string; id: string };

const asBody = (body: unknown): ResponsesBody =>
  body !== null && typeof body === 'object' ? (body as ResponsesBody) : {};

/** The step reached = how many tool results the CLI has sent back so far (kept stateless on purpose). */
const toolResultCount = (body: ResponsesBody): number =>
  Array.isArray(body.input)
    ? body.input.filter((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output')
        .length
    : 0;

/**
 * Only the agent's main loop offers tools; side requests (compaction, summaries) get plain text. The tool
 * names are not checked here, so a CLI that renamed them fails loudly ("unsupported call") instead of the
 * script silently ending early.
 */
const isAgentLoop = (body: ResponsesBody): boolean => (body.tools ?? []).length > 0;

/** V4A "Add File" hunk: every line of the new file prefixed with '+'; apply_patch ends the file with a newline. */
export function addFilePatch(filePath: string, content: string): string {
  const lines = content.endsWith('\n') ? content.slice(0, -1).split('\n') : content.split('\n');
  return ['*** Begin Patch', `*** Add File: ${filePath}`, ...lines.map((l) => `+${l}`), '*** End Patch'].join(
    '\n',
  );
}

const suffix = (): string => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

function itemFor(step: ScriptStep | undefined, index: number, finalText: string): OutputItem {
  const n = String(index + 1).padStart(2, '0');
  if (!step) {
    return {
      type: 'message',
      id: `msg_standin_${n}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: finalText, annotations: [] }],
    };
  }
  if (step.kind === 'write') {
    return {
      type: 'custom_tool_call',
      id: `ctc_standin_${n}`,
      call_id: `call_standin_${n}`,
      name: 'apply_patch',
      input: addFilePatch(step.path, step.content),
      status: 'completed',
    };
  }
  return {
    type: 'function_call',
    id: `fc_standin_${n}`,
    call_id: `call_standin_${n}`,
    name: 'exec_command',
    arguments: JSON.stringify({ cmd: step.command }),
    status: 'completed',
  };
}

/** The streamed deltas of one item, as the real API sends them between output_item.added and .done. */
function deltaEvents(item: OutputItem): Array<{ event: string; data: Record<string, unknown> }> {
  const base = { output_index: 0, item_id: item.id };
  if (item.type === 'message') {
    const text = String((item.content as Array<{ text: string }>)[0].text);
    const part = { type: 'output_text', text: '', annotations: [] };
    return [
      { event: 'response.content_part.added', data: { ...base, content_index: 0, part } },
      { event: 'response.output_text.delta', data: { ...base, content_index: 0, delta: text } },
      { event: 'response.output_text.done', data: { ...base, content_index: 0, text } },
      { event: 'response.content_part.done', data: { ...base, content_index: 0, part: { ...part, text } } },
    ];
  }
  if (item.type === 'custom_tool_call') {
    const input = String(item.input);
    return [
      { event: 'response.custom_tool_call_input.delta', data: { ...base, delta: input } },
      { event: 'response.custom_tool_call_input.done', data: { ...base, input } },
    ];
  }
  const args = String(item.arguments);
  return [
    { event: 'response.function_call_arguments.delta', data: { ...base, delta: args } },
    { event: 'response.function_call_arguments.done', data: { ...base, arguments: args } },
  ];
}

/** The item as first announced: still in progress, with its text / input / arguments empty. */
function startedItem(item: OutputItem): OutputItem {
  if (item.type === 'message') return { ...item, status: 'in_progress', content: [] };
  if (item.type === 'custom_tool_call') return { ...item, status: 'in_progress', input: '' };
  return { ...item, status: 'in_progress', arguments: '' };
}

function reply(script: ModelScript, body: ResponsesBody, res: http.ServerResponse): void {
  const usage = scriptUsage(script);
  const index = toolResultCount(body);
  const step = isAgentLoop(body) ? script.steps[index] : undefined;
  const item = itemFor(step, index, script.finalText);
  const response = {
    id: `resp_standin${suffix()}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'in_progress',
    model: body.model ?? 'gpt-standin',
    output: [] as OutputItem[],
    usage: null as unknown,
  };
  const events = [
    { event: 'response.created', data: { response } },
    { event: 'response.in_progress', data: { response } },
    { event: 'response.output_item.added', data: { output_index: 0, item: startedItem(item) } },
    ...deltaEvents(item),
    { event: 'response.output_item.done', data: { output_index: 0, item } },
    {
      event: 'response.completed',
      data: {
        response: {
          ...response,
          status: 'completed',
          output: [item],
          usage: {
            input_tokens: usage.input,
            input_tokens_details: { cached_tokens: usage.cached },
            output_tokens: usage.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: usage.input + usage.output,
          },
        },
      },
    },
  ];
  // Each SSE data object also names its own type and a running sequence number, like the real stream.
  writeSse(
    res,
    events.map((e, i) => ({ event: e.event, data: { type: e.event, sequence_number: i, ...e.data } })),
  );
}

function sendError(
  res: http.ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string,
): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_standin${suffix()}` });
  res.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

export async function startOpenAIResponsesStandIn(script: ModelScript): Promise<StandIn> {
  return startRecordingServer((req: RecordedRequest, res: http.ServerResponse) => {
    const url = new URL(req.path, 'http://127.0.0.1');
    const body = asBody(req.body);
    if (script.fail === 'auth') {
      sendError(
        res,
        401,
        'Incorrect API key provided: sk-stand***-key. You can find your API key at https://platform.openai.com/account/api-keys.',
        'invalid_request_error',
        'invalid_api_key',
      );
      return;
    }
    if (req.method === 'POST' && url.pathname === '/v1/responses') {
      if (script.fail === 'model-not-found') {
        const model = body.model ?? 'unknown';
        sendError(
          res,
          404,
          `The model \`${model}\` does not exist or you do not have access to it.`,
          'invalid_request_error',
          'model_not_found',
        );
      } else reply(script, body, res);
      return;
    }
    sendError(
      res,
      404,
      `Invalid URL (${req.method} ${url.pathname})`,
      'invalid_request_error',
      'unknown_url',
    );
  });
}

/** The API key the stand-in provider reads from the environment (the real one is never needed). */
export const CODEX_STANDIN_KEY_VAR = 'OPENAI_API_KEY';

/**
 * Environment that points `codex exec` at the stand-in. Codex 0.169 ignores OPENAI_BASE_URL, and its built-in
 * `openai` provider first tries a WebSocket transport (about 6 s of retries before it falls back to HTTPS) and
 * reads its key from CODEX_API_KEY or a login; so a custom provider in $CODEX_HOME/config.toml speaks plain
 * HTTPS Responses SSE to the stand-in. The model is chosen here, not in the preset argv, and must be one the
 * binary knows. CODEX_HOME must exist before codex starts.
 */
export async function codexEndpoint(standIn: StandIn, home: string): Promise<Record<string, string>> {
  const codexHome = path.join(home, '.codex');
  await mkdir(codexHome, { recursive: true });
  const config = [
    'model = "gpt-5.5"',
    'model_provider = "standin"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[model_providers.standin]',
    'name = "Stand-in"',
    `base_url = ${JSON.stringify(`${standIn.url}/v1`)}`,
    'wire_api = "responses"',
    `env_key = "${CODEX_STANDIN_KEY_VAR}"`,
    '',
  ].join('\n');
  await writeFile(path.join(codexHome, 'config.toml'), config);
  return {
    HOME: home,
    CODEX_HOME: codexHome,
    [CODEX_STANDIN_KEY_VAR]: 'sk-standin-key',
  };
}
