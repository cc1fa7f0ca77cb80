/** `saga chat serve`: the chat bridge (Slack app and generic webhook), configured by environment (README "Chat"). */
import type { Client } from '@temporalio/client';
import { ChatConfigError, describeChatConfig, loadBridgeConfig, type BridgeConfig } from '../../chat/config';
import { startChatBridge } from '../chat/server';
import type { ParsedArgs } from '../command-decl';
import { UserError } from '../errors';
import type { Io } from '../io';
import { untilStopped } from '../until-stopped';

/** `saga chat serve` (its only subcommand, which takes no arguments: runCli parsed the line by its declaration). */
export async function chatCommand(
  _args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
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
