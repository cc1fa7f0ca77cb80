/**
 * The generic webhook (DESIGN.md 4.7): `POST /hooks/respond` with `{saga, interaction, choice, text?, user}`,
 * signed `v1=<hex HMAC-SHA256 of "v1:<timestamp>:<raw body>">` with SAGA_WEBHOOK_SECRET.
 */
import type { Client } from '@temporalio/client';
import type { Approvers } from './allowlist';
import { ChatAnswerSchema, deliverChatAnswer } from './answer';
import { header, type BridgeRequest, type BridgeResponse } from './http-types';
import { verifySignature, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './signing';

const refuse = (status: number, error: string): BridgeResponse => ({ status, body: { ok: false, error } });

export async function handleWebhook(
  req: BridgeRequest,
  deps: { client: Client; approvers: Approvers; secret: string; nowSeconds: number },
): Promise<BridgeResponse> {
  const verified = verifySignature({
    version: 'v1',
    secret: deps.secret,
    timestamp: header(req, WEBHOOK_TIMESTAMP_HEADER),
    signature: header(req, WEBHOOK_SIGNATURE_HEADER),
    body: req.rawBody,
    nowSeconds: deps.nowSeconds,
  });
  if (!verified.ok) return refuse(401, `Unauthenticated: ${verified.reason}.`);

  let json: unknown;
  try {
    json = JSON.parse(req.rawBody);
  } catch {
    return refuse(400, 'Malformed: the body is not JSON.');
  }
  const parsed = ChatAnswerSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    return refuse(400, `Malformed: ${issues}. Expected {"saga", "interaction", "choice", "text"?, "user"}.`);
  }
  const outcome = await deliverChatAnswer(
    deps.client,
    deps.approvers,
    parsed.data,
    `webhook:${parsed.data.user}`,
  );
  if (!outcome.ok) return refuse(outcome.status, outcome.reason);
  return { status: 200, body: { ok: true } };
}
