/**
 * The board's one poller (issue 32, "many tabs cost the Temporal server no more than one"): each topic (the
 * saga list, or one saga) is read once per interval while anyone watches it, whatever the number of
 * subscribers, and a result is sent only when it changed. Nothing is polled while nobody watches.
 */

/** One server-sent event: its name and its JSON data. */
export interface BoardEvent {
  event: 'sagas' | 'status' | 'error';
  data: string;
}

export type Listener = (event: BoardEvent) => void;

/** The topic of the saga list; any other topic is a saga's name. */
export const LIST_TOPIC = '';

export interface WatcherSources {
  list(): Promise<unknown>;
  saga(name: string): Promise<unknown>;
}

export class BoardWatcher {
  private readonly subscribers = new Map<string, Set<Listener>>();
  private readonly last = new Map<string, BoardEvent>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private again = false;
  private closed = false;
  /** Reads made (one per topic per poll): what tests and the benchmark count. */
  reads = 0;

  constructor(
    private readonly sources: WatcherSources,
    private readonly pollMs = 500,
  ) {}

  /** Listens to a topic; the latest event comes at once when known, else after a read started now. */
  subscribe(topic: string, listener: Listener): () => void {
    let set = this.subscribers.get(topic);
    if (!set) this.subscribers.set(topic, (set = new Set()));
    set.add(listener);
    const known = this.last.get(topic);
    if (known) listener(known);
    else this.refresh();
    return () => {
      set.delete(listener);
      if (set.size > 0) return;
      this.subscribers.delete(topic);
      // A topic nobody watches is forgotten: its next subscriber must not get a stale state.
      this.last.delete(topic);
    };
  }

  /** Reads every watched topic now (after an answer, so pages see its effect at once). */
  refresh(): void {
    if (this.closed) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    void this.poll();
  }

  /** Open subscriptions, over all topics (a page that closed must not stay counted). */
  listeners(): number {
    return [...this.subscribers.values()].reduce((sum, set) => sum + set.size, 0);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      await Promise.all([...this.subscribers.keys()].map((topic) => this.read(topic)));
    } finally {
      this.polling = false;
    }
    if (this.closed || this.subscribers.size === 0) return;
    if (this.again) {
      this.again = false;
      return void this.poll();
    }
    this.timer = setTimeout(() => void this.poll(), this.pollMs);
  }

  private async read(topic: string): Promise<void> {
    this.reads++;
    let event: BoardEvent;
    try {
      const value = topic === LIST_TOPIC ? await this.sources.list() : await this.sources.saga(topic);
      event = { event: topic === LIST_TOPIC ? 'sagas' : 'status', data: JSON.stringify(value) };
    } catch (error) {
      event = { event: 'error', data: JSON.stringify({ error: (error as Error).message }) };
    }
    const before = this.last.get(topic);
    const listeners = this.subscribers.get(topic);
    if (!listeners || (before?.event === event.event && before.data === event.data)) return;
    this.last.set(topic, event);
    for (const listener of listeners) listener(event);
  }
}
