/**
 * The generic webhook (README "Chat"): `POST /hooks/respond` with `{saga, interaction, choice, text?, user}`,
 * signed `v1=<hex HMAC-SHA256 of "v1:<timestamp>:<raw body>">` with the caller's own secret. The caller names
 * itself in X-Saga-Caller (SAGA_WEBHOOK_CALLERS) and answers only as itself; without the header the request
 * is the shared caller (SAGA_WEBHOOK_SECRET), which answers only as SAGA_WEBHOOK_USER. A signature is accepted
 * once: the same request again within the 300 s window is refused 401.
 */
import type { Client } from '@temporalio/client';
import type { Approvers } from '../../chat/allowlist';
import { ChatAnswerSchema, deliverChatAnswer } from './answer';
import type { WebhookCallers } from '../../chat/config';
import { header, type BridgeRequest, type BridgeResponse } from './http-types';
import { REPLAY_REASON, type ReplayCache } from '../../chat/replay-cache';
import { verifySignature, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '../../chat/signing';
import { zodIssueLines } from '../../domain/text/zod-errors';

export const WEBHOOK_CALLER_HEADER = 'X-Saga-Caller';

const refuse = (status: number, error: string): BridgeResponse => ({ status, body: { ok: false, error } });

/** The caller a request claims to be and the secret that must have signed it. */
function identify(
  req: BridgeRequest,
  callers: WebhookCallers,
): { ok: true; caller: string; secret: string } | { ok: false; reason: string } {
  const named = header(req, WEBHOOK_CALLER_HEADER)?.trim();
  if (named) {
    const secret = callers.byId.get(named);
    // The name is safe to echo: it is what the caller sent, not a secret.
    return secret
      ? { ok: true, caller: named, secret }
      : { ok: false, reason: `unknown caller '${named.slice(0, 100)}' in ${WEBHOOK_CALLER_HEADER}` };
  }
  if (callers.shared) return { ok: true, caller: callers.shared.user, secret: callers.shared.secret };
  return { ok: false, reason: `missing ${WEBHOOK_CALLER_HEADER} header` };
}

export async function handleWebhook(
  req: BridgeRequest,
  deps: {
    client: Client;
    approvers: Approvers;
    callers: WebhookCallers;
    replays: ReplayCache;
    nowSeconds: number;
  },
): Promise<BridgeResponse> {
  const identified = identify(req, deps.callers);
  if (!identified.ok) return refuse(401, `Unauthenticated: ${identified.reason}.`);
  const timestamp = header(req, WEBHOOK_TIMESTAMP_HEADER);
  const signature = header(req, WEBHOOK_SIGNATURE_HEADER);
  const verified = verifySignature({
    version: 'v1',
    secret: identified.secret,
    timestamp,
    signature,
    body: req.rawBody,
    nowSeconds: deps.nowSeconds,
  });
  if (!verified.ok) return refuse(401, `Unauthenticated: ${verified.reason}.`);
  // Spent on verification, before anything else: a refused request cannot be retried unchanged either.
  if (!deps.replays.firstUse(`webhook:${signature}`, Number(timestamp), deps.nowSeconds))
    return refuse(401, `Unauthenticated: ${REPLAY_REASON}.`);

  let json: unknown;
  try {
    json = JSON.parse(req.rawBody);
  } catch {
    return refuse(400, 'Malformed: the body is not JSON.');
  }
  const parsed = ChatAnswerSchema.safeParse(json);
  if (!parsed.success) {
    const issues = zodIssueLines(parsed.error, 'body').join('; ');
    return refuse(400, `Malformed: ${issues}. Expected {"saga", "interaction", "choice", "text"?, "user"}.`);
  }
  if (parsed.data.user !== identified.caller)
    return refuse(
      403,
      `Caller '${identified.caller}' may answer only as '${identified.caller}', not as '${parsed.data.user.slice(0, 100)}'.`,
    );
  const outcome = await deliverChatAnswer(
    deps.client,
    deps.approvers,
    parsed.data,
    `webhook:${parsed.data.user}`,
  );
  if (!outcome.ok) return refuse(outcome.status, outcome.reason);
  return { status: 200, body: { ok: true } };
}
