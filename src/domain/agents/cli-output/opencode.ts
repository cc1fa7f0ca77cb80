/** opencode: `run --format json` events; `step_finish` parts carry tokens and cost. */
import { num, obj, str, type Json } from '../../text/json-fields';
import { opencodeStepUsage } from './cli-usage';
import type { Usage } from '../../contract/state';
import { addUsage, noUsage } from '../usage';
import { apiFailure, deniedFailure, failure, notAuthenticated } from './failures';
import type { CliOutputReader, Read, ReadInput } from './reader';
import { describeTool, joined, normalisePath, oneLine, toolCall } from './text';

function readOpencode(lines: Json[], input: ReadInput): Read {
  const read: Read = {};
  const denied: string[] = [];
  let usage: Usage | null = null;
  for (const line of lines) {
    read.sessionId ??= str(line.sessionID) ?? str(obj(line.part)?.sessionID);
    const part = obj(line.part) ?? line;
    if ((line.type === 'step_finish' || part.type === 'step-finish') && obj(part.tokens)) {
      usage = addUsage(usage ?? noUsage(), opencodeStepUsage(part, obj(part.tokens)!));
      read.costKnown ||= typeof part.cost === 'number' && part.cost > 0;
    }
    if (line.type === 'error') {
      const error = obj(line.error);
      const data = obj(error?.data);
      const message = str(data?.message) ?? str(error?.message) ?? str(error?.name) ?? JSON.stringify(line);
      const status = num(data?.statusCode);
      read.failure =
        status === 401 || status === 403
          ? notAuthenticated(input.profile, `${status} ${message}`)
          : (apiFailure(input.profile, message) ??
            failure('cli-error', `agent ${input.profile} failed: ${oneLine(message)}`));
    }
    // A tool call that asked for permission is auto-rejected in a headless run.
    const state = obj(part.state);
    if (
      line.type === 'tool_use' &&
      state?.status === 'error' &&
      /rejected permission/.test(str(state.error) ?? '')
    )
      denied.push(describeTool(str(part.tool) ?? 'tool', normalisePath(obj(state.input))));
  }
  read.usage = usage;
  if (!read.failure && denied.length) read.failure = deniedFailure(input.profile, denied);
  return read;
}

function lineText(e: Json): string | null {
  const part = obj(e.part) ?? {};
  if (e.type === 'text') return str(part.text);
  if (e.type === 'tool_use') {
    const state = obj(part.state);
    return `${toolCall(str(part.tool) ?? 'tool', obj(state?.input))}${state?.status === 'error' ? ` ✗ ${str(state.error)}` : ''}`;
  }
  if (e.type === 'error') return `error: ${str(obj(obj(e.error)?.data)?.message) ?? str(obj(e.error)?.name)}`;
  return null;
}

function answerText(lines: Json[]): string | null {
  return joined(
    lines.map((l) => (l.type === 'text' ? str(obj(l.part)?.text) : null)),
    '\n',
  );
}

export const opencodeReader: CliOutputReader = { outcome: readOpencode, line: lineText, answer: answerText };
