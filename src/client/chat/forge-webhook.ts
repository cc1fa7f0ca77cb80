/**
 * `POST /webhooks/forge` of `saga chat serve`: a Gitea/Forgejo or GitHub webhook, signed with
 * SAGA_FORGE_WEBHOOK_SECRET (src/chat/forge-signature.ts), becomes a `forgeEvent` signal to the saga whose
 * branch it names (src/domain/delivery/forge-webhook.ts). The signature is checked before anything else; a
 * bad one is 401 and nothing is signalled. An event for a saga that does not exist or has ended is answered
 * 202 with a log line, never an error the forge would keep retrying. The signal only wakes the saga's
 * delivery watch early; the watch's own timer reads the forge anyway, so a lost webhook costs only time.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { forgeSignature, verifyForgeSignature } from '../../chat/forge-signature';
import type { ReplayCache } from '../../chat/replay-cache';
import { nowSeconds } from '../../chat/signing';
import { sagaNameFromBranch, sagaWorkflowId } from '../../domain/contract/naming';
import { ForgeEventSchema, type ForgeEvent } from '../../domain/delivery/forge-shapes';
import { readForgeWebhook, type WebhookForge } from '../../domain/delivery/forge-webhook';
import { forgeEventSignal } from '../../domain/saga/messages';
import { header, type BridgeRequest, type BridgeResponse } from './http-types';

export const FORGE_WEBHOOK_PATH = '/webhooks/forge';
/** Forge payloads carry whole repository and user objects: larger than a chat answer, still bounded. */
export const FORGE_WEBHOOK_MAX_BYTES = 1024 * 1024;
const SHAS_REMEMBERED = 2_000;

/**
 * Which saga branch each recently pushed commit is the tip of. Gitea's status events name no branch, only
 * the commit; the push (or pull request) event before them did. Bounded: the oldest are forgotten first.
 */
export class ShaBranches {
  private readonly heads = new Map<string, string>();
  remember(sha: string, head: string): void {
    this.heads.delete(sha);
    this.heads.set(sha, head);
    if (this.heads.size > SHAS_REMEMBERED) this.heads.delete(this.heads.keys().next().value as string);
  }
  headOf(sha: string): string | undefined {
    return this.heads.get(sha);
  }
}

export interface ForgeWebhookDeps {
  client: Client;
  secret: string;
  shas: ShaBranches;
  /** Deliveries already taken (by their signature), for 300 s: see handleForgeWebhook. */
  replays: ReplayCache;
  log: (line: string) => void;
}

const answer = (status: number, body: Record<string, unknown>): BridgeResponse => ({ status, body });

/** The forge and its event name from the headers: Gitea's fine-grained event type first (it also sends X-GitHub-Event). */
function eventOf(req: BridgeRequest): { forge: WebhookForge; event: string } | undefined {
  const gitea = header(req, 'X-Gitea-Event-Type') ?? header(req, 'X-Forgejo-Event-Type');
  if (gitea) return { forge: 'gitea', event: gitea.trim() };
  const github = header(req, 'X-GitHub-Event');
  return github ? { forge: 'github', event: github.trim() } : undefined;
}

export async function handleForgeWebhook(
  req: BridgeRequest,
  deps: ForgeWebhookDeps,
): Promise<BridgeResponse> {
  const verified = verifyForgeSignature(deps.secret, req.rawBody, (name) => header(req, name));
  if (!verified.ok) return answer(401, { ok: false, error: `Unauthenticated: ${verified.reason}.` });
  // Forge signatures carry no timestamp: the same delivery sent again (a captured one, replayed) is taken once,
  // so it cannot make a saga's watch call the forge again and again.
  const now = nowSeconds();
  if (!deps.replays.firstUse(`forge:${forgeSignature(deps.secret, req.rawBody)}`, now, now))
    return answer(202, { ok: true, ignored: 'this delivery was already received' });
  const named = eventOf(req);
  if (!named)
    return answer(400, { ok: false, error: 'Malformed: no X-Gitea-Event-Type or X-GitHub-Event header.' });
  let payload: unknown;
  try {
    payload = JSON.parse(req.rawBody);
  } catch {
    return answer(400, {
      ok: false,
      error: 'Malformed: the body is not JSON (set the hook to application/json).',
    });
  }
  const reading = readForgeWebhook(named.forge, named.event, payload);
  switch (reading.action) {
    case 'ignore':
      return answer(202, { ok: true, ignored: reading.reason });
    case 'remember':
      deps.shas.remember(reading.sha, reading.head);
      return answer(202, { ok: true, ignored: 'a push: nothing to signal' });
    case 'find-branch': {
      const head = deps.shas.headOf(reading.sha);
      if (!head) {
        deps.log(`forge webhook: a status of ${reading.sha.slice(0, 12)}, of no saga branch seen pushed`);
        return answer(202, { ok: true, ignored: 'a status of a commit not pushed to a saga branch' });
      }
      // Only saga branches are remembered, so the name is there.
      return signalSaga(deps, sagaNameFromBranch(head) as string, { kind: 'ci', head, sha: reading.sha });
    }
    case 'signal':
      return signalSaga(deps, reading.saga, reading.event);
  }
}

async function signalSaga(deps: ForgeWebhookDeps, saga: string, event: ForgeEvent): Promise<BridgeResponse> {
  // Already validated by the reader; parsed again so nothing but a checked ForgeEvent is ever sent.
  const checked = ForgeEventSchema.parse(event);
  if (checked.head && checked.sha) deps.shas.remember(checked.sha, checked.head);
  try {
    await deps.client.workflow.getHandle(sagaWorkflowId(saga)).signal(forgeEventSignal, checked);
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) {
      deps.log(`forge webhook: ${checked.kind} for saga '${saga}', which is not running; nothing signalled`);
      return answer(202, { ok: true, ignored: `saga '${saga}' is not running` });
    }
    deps.log(`forge webhook: saga '${saga}' could not be signalled: ${(error as Error).message}`);
    return answer(503, { ok: false, error: 'The saga could not be reached; nothing was signalled.' });
  }
  deps.log(`forge webhook: ${checked.kind} → saga '${saga}' (${checked.head})`);
  return answer(200, { ok: true, saga, kind: checked.kind });
}
