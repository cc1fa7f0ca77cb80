/**
 * Text an agent (or a tracker, a chat user) wrote, made safe to print in a terminal: escape sequences could
 * move the cursor, rewrite what was printed before it (hide a line of `saga logs`), set the window title,
 * write the clipboard (OSC 52) or make a link that says one thing and opens another (OSC 8). Newline and
 * tab stay; every other C0 and C1 control, DEL, and each whole ESC sequence goes.
 */

// ESC [ … final byte (CSI); ESC ] / P / X / ^ / _ … up to BEL or ESC \ (OSC, DCS, SOS, PM, APC, which
// may be unterminated: then to the end); ESC and one more character (the other escapes).
const ESCAPES =
  // eslint-disable-next-line no-control-regex
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][\s\S]*?(?:\x07|\x1b\\|$)|\x9b[0-?]*[ -/]*[@-~]|[\x9d\x90\x98\x9e\x9f][\s\S]*?(?:\x07|\x9c|\x1b\\|$)|\x1b[\s\S]?/g;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** `text` without control characters or escape sequences, newlines and tabs kept; CR LF becomes LF. */
export function stripControls(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(ESCAPES, '').replace(CONTROLS, '');
}

/** `stripControls`, and newlines and tabs made spaces too: for a value printed inside one line. */
export const oneTerminalLine = (text: string): string => stripControls(text).replace(/[\n\t]/g, ' ');
