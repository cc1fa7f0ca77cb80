/**
 * The board's one poller (many tabs cost the Temporal server no more than one): each topic (the
 * saga list, or one saga) is read once per interval while anyone watches it, whatever the number of
 * subscribers, and a result is sent only when it changed. Nothing is polled while nobody watches. Each topic
 * has its own loop, so a slow one (a list of sagas whose workers are gone) never holds up another.
 * A saga's first event to a subscriber is its whole view (`status`, with the topic's version as the event id);
 * after that only what changed (`status-delta`: `{ name, from, to, ops }`), unless that is no smaller.
 */
import { jsonDelta } from './delta';

/** One server-sent event: its name and its JSON data. */
export interface BoardEvent {
  event: 'sagas' | 'status' | 'status-delta' | 'error';
  data: string;
  /** A saga's version (counts its changes): the page sees a gap, and reopens, if a delta is lost. */
  id?: string;
}

export type Listener = (event: BoardEvent) => void;

/** The topic of the saga list; any other topic is a saga's name. */
export const LIST_TOPIC = '';

export interface WatcherSources {
  list(): Promise<unknown>;
  /**
   * A saga's view. `first`: nobody has seen it yet, so the lanes come before the running agents' lines (one
   * round trip to Temporal fewer); the watcher reads it whole right after.
   */
  saga(name: string, read: { first: boolean }): Promise<unknown>;
}

interface Topic {
  listeners: Set<Listener>;
  last?: BoardEvent;
  /** The latest value read and its version. */
  value?: unknown;
  version: number;
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
    if (!topic)
      this.topics.set(name, (topic = { listeners: new Set(), reading: false, again: false, version: 0 }));
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

  /**
   * A saga's new view: numbered, kept whole for the next subscriber, and sent to the current ones as a delta
   * from the previous view when there was one and the delta is smaller than half the whole.
   */
  private versioned(name: string, topic: Topic, whole: BoardEvent, value: unknown): BoardEvent {
    const from = topic.last?.event === 'status' ? topic.version : null;
    const previous = topic.value;
    topic.version++;
    topic.value = value;
    whole.id = String(topic.version);
    if (from === null) return whole;
    const data = JSON.stringify({ name, from, to: topic.version, ops: jsonDelta(previous, value) });
    return data.length * 2 < whole.data.length ? { event: 'status-delta', data, id: whole.id } : whole;
  }

  private async read(name: string, topic: Topic): Promise<void> {
    if (this.closed) return;
    topic.reading = true;
    topic.again = false;
    this.reads++;
    let event: BoardEvent;
    let value: unknown;
    const first = name !== LIST_TOPIC && topic.version === 0;
    try {
      value = name === LIST_TOPIC ? await this.sources.list() : await this.sources.saga(name, { first });
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
      const sent = event.event === 'status' ? this.versioned(name, topic, event, value) : event;
      topic.last = event;
      for (const listener of topic.listeners) listener(sent);
    }
    // After a first view without the agents' lines, the whole one at once.
    if (topic.again || (first && event.event === 'status')) return void this.read(name, topic);
    topic.timer = setTimeout(() => void this.read(name, topic), this.pollMs);
  }
}
