/**
 * The CLI's output seam: every command prints through it. Each call is one complete line, given without its
 * trailing newline; bin/saga (main.ts) writes `out` to stdout and `err` to stderr, tests collect the lines.
 */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}
