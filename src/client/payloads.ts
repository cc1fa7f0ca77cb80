/**
 * Payloads read straight from a history or a description (start input, child results, signals, heartbeats)
 * have not been through the client's data converter: decode them with it, so they read the same with the
 * codec (encrypted) as without.
 */
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { decodeOptionalSinglePayload } from '@temporalio/common/lib/internal-non-workflow';

export async function fromRawPayload<T>(client: Client, payload: Payload): Promise<T> {
  return (await decodeOptionalSinglePayload<T>(client.options.loadedDataConverter, payload)) as T;
}
