/** Text helpers the CLI output readers share: JSON lines, one-line messages, tool calls people can read. */
import { str, tryJson, type Json } from '../../text/json-fields';

/** Every line of `text` that is a JSON object. */
export function jsonLines(text: string): Json[] {
  const out: Json[] = [];
  const whole = text.trim();
  // `--output-format json` may pretty-print one object over several lines.
  if (whole.startsWith('{') && whole.endsWith('}') && !whole.includes('\n{')) {
    const value = tryJson(whole);
    if (value) return [value];
  }
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    const value = tryJson(t);
    if (value) out.push(value);
  }
  return out;
}

/** Whitespace collapsed, at most 200 characters: one line of a status or message. */
export const oneLine = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
};

/** The first non-blank line matching `pattern`, else the last non-blank line. */
export function firstMatchingLine(text: string, pattern: RegExp): string {
  const lines = text.split(/\r?\n/).filter((l) => l.trim());
  return lines.find((l) => pattern.test(l)) ?? lines[lines.length - 1] ?? '';
}

/** The non-empty parts joined, or null when there are none. */
export function joined(parts: Array<string | null>, glue: string): string | null {
  const text = parts.filter((p): p is string => Boolean(p)).join(glue);
  return text || null;
}

/** opencode names the path `filePath`. */
export const normalisePath = (input: Json | null): Json | null =>
  input && typeof input.filePath === 'string' ? { ...input, file_path: input.filePath } : input;

/** `Bash(npm test)`, `Write(…/src/app.js)`: a command keeps its start, a path its end. */
export function describeTool(name: string, input: Json | null): string {
  const command = str(input?.command);
  const file = str(input?.file_path) ?? str(input?.path);
  const max = 40;
  const short = command
    ? command.length > max
      ? `${command.slice(0, max - 1)}…`
      : command
    : file && file.length > max
      ? `…${file.slice(-(max - 1))}`
      : (file ?? '');
  return short ? `${name}(${short})` : name;
}

/** A tool call in a readable line: `→ Bash(npm test)`. */
export const toolCall = (name: string, input: Json | null) => `→ ${describeTool(name, normalisePath(input))}`;
