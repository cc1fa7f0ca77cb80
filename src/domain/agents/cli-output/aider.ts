/** aider: no JSON on stdout; `--analytics-log` JSONL `message_send` events carry tokens and cost. */
import { num, obj, str, type Json } from '../../text/json-fields';
import type { Usage } from '../../contract/state';
import { addUsage, noUsage } from '../usage';
import { apiFailure } from './failures';
import type { CliOutputReader, Read, ReadInput } from './reader';
import { jsonLines } from './text';

function readAider(_lines: Json[], input: ReadInput): Read {
  const read: Read = {};
  let usage: Usage | null = null;
  for (const event of jsonLines(input.sideOutput ?? '')) {
    if (event.event !== 'message_send') continue;
    const p = obj(event.properties) ?? {};
    read.model ??= str(p.main_model);
    usage = addUsage(usage ?? noUsage(), {
      inputTokens: num(p.prompt_tokens),
      outputTokens: num(p.completion_tokens),
      costUsd: num(p.cost),
    });
    read.costKnown ||= num(p.cost) > 0;
  }
  read.usage = usage;
  const apiError = apiFailure(input.profile, input.transcript);
  if (apiError) read.failure = apiError;
  return read;
}

export const aiderReader: CliOutputReader = { outcome: readAider };
