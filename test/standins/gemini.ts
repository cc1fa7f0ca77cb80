/**
 * Stand-in of the Gemini API (generativelanguage v1beta) for the real Gemini CLI. The CLI asks three kinds
 * of things: `:streamGenerateContent?alt=sse` for the agent's own turns (this is where the script is
 * played), `:generateContent` for utility calls that want JSON back (the model router's complexity score,
 * the next-speaker check) or a plain summary, and `:countTokens`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type http from 'node:http';

import {
  type ModelScript,
  type RecordedRequest,
  type StandIn,
  scriptUsage,
  startRecordingServer,
  writeSse,
} from './script';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Part {
  text?: string;
  functionCall?: { name: string; args: Record<string, Json> };
  functionResponse?: unknown;
}

interface Content {
  role?: string;
  parts?: Part[];
}

interface GenerateRequest {
  contents?: Content[];
  generationConfig?: { responseJsonSchema?: JsonSchema; responseSchema?: JsonSchema };
}

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: Json[];
  minimum?: number;
}

const MODEL_PATH =
  /^\/v1(?:beta|alpha)?\/models\/([^/:?]+):(streamGenerateContent|generateContent|countTokens)/;

function asRequest(body: unknown): GenerateRequest {
  return typeof body === 'object' && body !== null ? (body as GenerateRequest) : {};
}

/** The script step a turn is at: one step per tool result the CLI has sent back so far. */
function stepIndex(request: GenerateRequest): number {
  let results = 0;
  for (const content of request.contents ?? []) {
    for (const part of content.parts ?? []) if (part.functionResponse !== undefined) results += 1;
  }
  return results;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify(body));
}

/** Google's real answer to a key it does not know (HTTP 400, not 401). */
function authError(): unknown {
  const message = 'API key not valid. Please pass a valid API key.';
  return {
    error: {
      code: 400,
      message,
      status: 'INVALID_ARGUMENT',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'API_KEY_INVALID',
          domain: 'googleapis.com',
          metadata: { service: 'generativelanguage.googleapis.com' },
        },
        { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message },
      ],
    },
  };
}

function modelNotFound(model: string, method: string): unknown {
  const called = method === 'streamGenerateContent' ? 'StreamGenerateContent' : method;
  return {
    error: {
      code: 404,
      message:
        `models/${model} is not found for API version v1beta, or is not supported for ${called}. ` +
        'Call ListModels to see the list of available models and their supported methods.',
      status: 'NOT_FOUND',
    },
  };
}

function usageMetadata(input: number, output: number, cached: number): Record<string, number> {
  const usage: Record<string, number> = {
    promptTokenCount: input,
    candidatesTokenCount: output,
    totalTokenCount: input + output,
  };
  // The real API leaves the field out when nothing came from the cache.
  if (cached > 0) usage.cachedContentTokenCount = cached;
  return usage;
}

/** A value that satisfies a response schema, so utility calls parse (router score, next speaker). */
function fillSchema(schema: JsonSchema | undefined, name = ''): Json {
  if (!schema) return null;
  if (name === 'next_speaker') return 'user'; // the run ends after the final answer
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const type = (Array.isArray(schema.type) ? schema.type[0] : schema.type)?.toLowerCase();
  switch (type) {
    case 'object': {
      const out: { [key: string]: Json } = {};
      for (const [key, sub] of Object.entries(schema.properties ?? {})) out[key] = fillSchema(sub, key);
      return out;
    }
    case 'array':
      return [];
    case 'integer':
    case 'number':
      // A mid-range score keeps the router's choice ordinary; schemas with a minimum get at least it.
      return Math.max(schema.minimum ?? 0, 30);
    case 'boolean':
      return false;
    default:
      return 'Scripted stand-in answer.';
  }
}

function candidate(parts: Part[]): unknown {
  return { content: { role: 'model', parts }, finishReason: 'STOP', index: 0 };
}

export async function startGeminiStandIn(script: ModelScript): Promise<StandIn> {
  const usage = scriptUsage(script);
  let responses = 0;

  return startRecordingServer((req: RecordedRequest, res: http.ServerResponse) => {
    const match = MODEL_PATH.exec(req.path);
    if (req.method !== 'POST' || !match) {
      sendJson(res, 404, { error: { code: 404, message: `Not found: ${req.path}`, status: 'NOT_FOUND' } });
      return;
    }
    const [, model, method] = match;
    if (script.fail === 'auth') return sendJson(res, 400, authError());
    if (script.fail === 'model-not-found') return sendJson(res, 404, modelNotFound(model, method));

    const body = asRequest(req.body);
    responses += 1;
    const responseId = `standin-${responses}`;

    if (method === 'countTokens') {
      const chars = JSON.stringify(body.contents ?? []).length;
      return sendJson(res, 200, { totalTokens: Math.ceil(chars / 4) });
    }

    if (method === 'generateContent') {
      // Utility calls report no tokens so that a run's totals are (scripted turns) x script usage.
      const schema = body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema;
      const text = schema ? JSON.stringify(fillSchema(schema)) : 'Scripted stand-in summary.';
      return sendJson(res, 200, {
        candidates: [candidate([{ text }])],
        usageMetadata: usageMetadata(0, 0, 0),
        modelVersion: model,
        responseId,
      });
    }

    const step = script.steps[stepIndex(body)];
    const meta = {
      usageMetadata: usageMetadata(usage.input, usage.output, usage.cached),
      modelVersion: model,
    };
    if (step) {
      const call: Part['functionCall'] =
        step.kind === 'write'
          ? { name: 'write_file', args: { file_path: step.path, content: step.content } }
          : {
              name: 'run_shell_command',
              args: { command: step.command, description: 'Run a scripted command' },
            };
      return writeSse(res, [
        { data: { candidates: [candidate([{ functionCall: call }])], ...meta, responseId } },
      ]);
    }
    // The answer in two chunks, as the real stream does; usage is final on the last one.
    const cut = Math.ceil(script.finalText.length / 2);
    writeSse(res, [
      {
        data: {
          candidates: [
            { content: { role: 'model', parts: [{ text: script.finalText.slice(0, cut) }] }, index: 0 },
          ],
          modelVersion: model,
          responseId,
        },
      },
      { data: { candidates: [candidate([{ text: script.finalText.slice(cut) }])], ...meta, responseId } },
    ]);
  });
}

/**
 * Points the Gemini CLI at the stand-in. The auth type cannot be chosen by an environment variable when
 * GOOGLE_GEMINI_BASE_URL is set (exit 41 otherwise), so it goes into $HOME/.gemini/settings.json, together
 * with the switches that stop update checks and usage statistics from reaching out.
 */
export async function geminiEndpoint(standIn: StandIn, home: string): Promise<Record<string, string>> {
  const dir = path.join(home, '.gemini');
  await mkdir(dir, { recursive: true });
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  };
  await writeFile(path.join(dir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  // API errors make the CLI write a report file into os.tmpdir(): keep those inside the throwaway home.
  const tmp = path.join(home, 'tmp');
  await mkdir(tmp, { recursive: true });
  return {
    HOME: home,
    GOOGLE_GEMINI_BASE_URL: standIn.url,
    GEMINI_API_KEY: 'standin-gemini-key',
    // Skips the child re-launch that only raises the heap limit: start-up is about twice as fast.
    GEMINI_CLI_NO_RELAUNCH: 'true',
    GEMINI_TELEMETRY_ENABLED: 'false',
    NO_BROWSER: 'true',
    TMPDIR: tmp,
  };
}
