/** A minimal server-sent events reader for tests: collects events and waits for one that matches. */
export interface SseEvent {
  event: string;
  data: string;
}

export interface EventStream {
  events: SseEvent[];
  waitFor(predicate: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

export function openEvents(url: string): EventStream {
  const abort = new AbortController();
  const events: SseEvent[] = [];
  let wake: () => void = () => undefined;
  const read = async () => {
    const res = await fetch(url, { signal: abort.signal, headers: { accept: 'text/event-stream' } });
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const field = (name: string) =>
          block
            .split('\n')
            .filter((l) => l.startsWith(`${name}:`))
            .map((l) => l.slice(name.length + 1).replace(/^ /, ''))
            .join('\n');
        events.push({ event: field('event') || 'message', data: field('data') });
        wake();
      }
    }
  };
  read().catch(() => undefined);
  return {
    events,
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find(predicate);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(
            `No matching event within ${timeoutMs} ms; saw: ${events.map((e) => e.event).join(', ')}`,
          );
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 200);
        });
      }
    },
    close: () => abort.abort(),
  };
}
