/**
 * The board's one poller (many tabs cost the Temporal server no more than one): each topic (the
 * saga list, or one saga) is read once per interval while anyone watches it, whatever the number of
 * subscribers, and a result is sent only when it changed. Nothing is polled while nobody watches. Each topic
 * has its own loop, so a slow one (a list of sagas whose workers are gone) never holds up another.
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

interface Topic {
  listeners: Set<Listener>;
  last?: BoardEvent;
  timer?: NodeJS.Timeout;
  reading: boolean;
  /** Read again as soon as the current read ends (an answer came in meanwhile). */
  again: boolean;
}

export class BoardWatcher {
  private readonly topics = new Map<string, Topic>();
  private closed = false;
  /** Reads made (one per topic per poll): what tests and the benchmark count. */
  reads = 0;

  constructor(
    private readonly sources: WatcherSources,
    private readonly pollMs = 500,
  ) {}

  /** Listens to a topic; the latest event comes at once when known, else after a read started now. */
  subscribe(name: string, listener: Listener): () => void {
    let topic = this.topics.get(name);
    const fresh = !topic;
    if (!topic) this.topics.set(name, (topic = { listeners: new Set(), reading: false, again: false }));
    topic.listeners.add(listener);
    if (topic.last) listener(topic.last);
    if (fresh) void this.read(name, topic);
    return () => {
      topic.listeners.delete(listener);
      if (topic.listeners.size > 0 || this.topics.get(name) !== topic) return;
      // A topic nobody watches is forgotten: its next subscriber must not get a stale state.
      clearTimeout(topic.timer);
      this.topics.delete(name);
    };
  }

  /** Reads every watched topic now (after an answer, so pages see its effect at once). */
  refresh(): void {
    for (const [name, topic] of this.topics) {
      if (topic.reading) topic.again = true;
      else {
        clearTimeout(topic.timer);
        void this.read(name, topic);
      }
    }
  }

  /** Open subscriptions, over all topics (a page that closed must not stay counted). */
  listeners(): number {
    return [...this.topics.values()].reduce((sum, topic) => sum + topic.listeners.size, 0);
  }

  close(): void {
    this.closed = true;
    for (const topic of this.topics.values()) clearTimeout(topic.timer);
  }

  private async read(name: string, topic: Topic): Promise<void> {
    if (this.closed) return;
    topic.reading = true;
    topic.again = false;
    this.reads++;
    let event: BoardEvent;
    try {
      const value = name === LIST_TOPIC ? await this.sources.list() : await this.sources.saga(name);
      event = { event: name === LIST_TOPIC ? 'sagas' : 'status', data: JSON.stringify(value) };
    } catch (error) {
      event = { event: 'error', data: JSON.stringify({ error: (error as Error).message }) };
    } finally {
      topic.reading = false;
    }
    // Forgotten while it read (nobody watches any more), or the board closed: nothing to send or schedule.
    if (this.closed || this.topics.get(name) !== topic) return;
    const before = topic.last;
    if (before?.event !== event.event || before.data !== event.data) {
      topic.last = event;
      for (const listener of topic.listeners) listener(event);
    }
    if (topic.again) return void this.read(name, topic);
    topic.timer = setTimeout(() => void this.read(name, topic), this.pollMs);
  }
}
