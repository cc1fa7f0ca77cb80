/** `saga chat serve`: the chat bridge (Slack app and generic webhook), configured by environment (README "Chat"). */
import type { Client } from '@temporalio/client';
import { parseArgs } from '../args';
import { ChatConfigError, describeChatConfig, loadBridgeConfig, type BridgeConfig } from '../../chat/config';
import { startChatBridge } from '../chat/server';
import { UserError } from '../errors';
import type { Io } from '../io';
import { untilStopped } from '../until-stopped';

export async function chatCommand(argv: string[], io: Io, connect: () => Promise<Client>): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'serve')
    throw new UserError(
      'Usage: saga chat serve (configured by SAGA_CHAT_PORT, SAGA_APPROVERS, SLACK_*, SAGA_WEBHOOK_CALLERS or SAGA_WEBHOOK_SECRET with SAGA_WEBHOOK_USER, SAGA_NOTIFY_URL with SAGA_NOTIFY_SECRET).',
    );
  parseArgs('chat serve', rest);
  let config: BridgeConfig;
  try {
    config = loadBridgeConfig(process.env);
  } catch (error) {
    if (error instanceof ChatConfigError) throw new UserError(`saga chat serve: ${error.message}`);
    throw error;
  }
  const client = await connect();
  const bridge = await startChatBridge({ client, config, log: (line) => io.out(line) });
  io.out(`Chat bridge listening on port ${bridge.port}.\n${describeChatConfig(config)}`);
  return untilStopped(io.out, 'chat bridge', () => bridge.close());
}
