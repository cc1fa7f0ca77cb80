/**
 * What the chat notifications of one interaction (or notice) already sent, under
 * `<sagaHome>/.chat/<saga>/<interaction>.json`: a retried activity reads it and never posts twice.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { z } from 'zod';
import type { NotifiedInteraction } from '../../chat/messages';

const SlackRefSchema = z.object({ channel: z.string(), ts: z.string() });
const RecordSchema = z.object({
  interaction: z.object({ id: z.string(), kind: z.string(), prompt: z.string() }),
  /** Slack messages by reminder number (0 = the first notification). */
  slack: z.record(z.string(), SlackRefSchema).default({}),
  /** Reminder numbers already delivered to SAGA_NOTIFY_URL. */
  webhook: z.array(z.number()).default([]),
});
export type NotifyRecord = z.infer<typeof RecordSchema>;

/** Saga and interaction names become path segments: nothing that could climb out of `.chat/`. */
const SAFE_NAME = /^[a-z0-9][a-z0-9.-]*$/;

export class NotifyRecords {
  constructor(private readonly sagaHome: string) {}

  file(saga: string, interactionId: string): string {
    if (!SAFE_NAME.test(saga) || !SAFE_NAME.test(interactionId))
      throw ApplicationFailure.nonRetryable(
        `Not a saga/interaction name: ${saga}/${interactionId}`,
        'ChatInputError',
      );
    return path.join(this.sagaHome, '.chat', saga, `${interactionId}.json`);
  }

  async read(file: string): Promise<NotifyRecord | null> {
    try {
      return RecordSchema.parse(JSON.parse(await fs.readFile(file, 'utf8')));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** The record, or a new one with nothing sent yet. */
  async readOrNew(
    file: string,
    notice: Pick<NotifiedInteraction, 'id' | 'kind' | 'prompt'>,
  ): Promise<NotifyRecord> {
    const { id, kind, prompt } = notice;
    return (await this.read(file)) ?? { interaction: { id, kind, prompt }, slack: {}, webhook: [] };
  }

  /** Written whole (temporary file, then rename): a crash never leaves half a record. */
  async write(file: string, record: NotifyRecord): Promise<void> {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(record, null, 2));
    await fs.rename(tmp, file);
  }
}
