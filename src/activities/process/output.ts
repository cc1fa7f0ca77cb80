/** A child's output as the supervisor sees it: the end of it (bounded), and its lines for `stopOnLine`. */
const TAIL_BYTES = 4096;
const LAST_LINE_MAX = 200;
const LINE_MAX = 64 * 1024;

/** Keeps only the end of a stream of chunks. */
export class OutputTail {
  bytes = 0;
  private tail = Buffer.alloc(0);

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    // Copy so the tail never pins a large chunk in memory.
    this.tail =
      chunk.length >= TAIL_BYTES
        ? Buffer.from(chunk.subarray(chunk.length - TAIL_BYTES))
        : Buffer.from(Buffer.concat([this.tail, chunk]).subarray(-TAIL_BYTES));
  }

  text(): string {
    let start = 0;
    // Skip UTF-8 continuation bytes left over from a character cut in half.
    while (start < this.tail.length && start < 4 && (this.tail[start] & 0xc0) === 0x80) start++;
    return this.tail.subarray(start).toString('utf8');
  }

  lastLine(): string {
    const lines = this.text().split(/\r\n|\r|\n/);
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i].trim();
      if (line) return line.length > LAST_LINE_MAX ? `${line.slice(0, LAST_LINE_MAX - 1)}…` : line;
    }
    return '';
  }
}

/** Cuts a stream into lines for `stopOnLine`; a line longer than LINE_MAX is skipped, never buffered. */
export class LineSplitter {
  private partial = '';
  private skipping = false;
  constructor(private readonly check: (line: string) => string | null) {}

  add(chunk: Buffer): string | null {
    const parts = chunk.toString('utf8').split('\n');
    let found: string | null = null;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      if (!this.skipping) this.partial += part;
      if (this.partial.length > LINE_MAX) {
        this.partial = '';
        this.skipping = true;
      }
      if (last) return;
      if (!this.skipping) found ??= this.check(this.partial);
      this.partial = '';
      this.skipping = false;
    });
    return found;
  }
}
