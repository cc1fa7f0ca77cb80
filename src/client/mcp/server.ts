/**
 * `saga mcp`: a Model Context Protocol server, so an agent or IDE the user runs (Claude Code, Codex, Gemini
 * CLI, Cursor, VS Code) can list, start, read and answer sagas (README "Use it from your agent or IDE
 * (MCP)"). Its tools call what the CLI calls; answers go through the same validated Update, recorded as
 * `mcp:<user>`.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { packageVersion } from '../args';
import type { McpContext } from './context';
import { registerResources } from './resources';
import { UNTRUSTED_NOTE } from './results';
import { registerActTools } from './tools-act';
import { registerReadTools } from './tools-read';

export type { McpContext } from './context';

export const MCP_TOOL_NAMES = [
  'saga_list',
  'saga_status',
  'saga_start',
  'saga_respond',
  'saga_report',
  'saga_logs',
] as const;

export function createSagaMcpServer(ctx: McpContext): McpServer {
  const server = new McpServer(
    { name: 'saga', title: 'Saga on Temporal', version: packageVersion() },
    {
      instructions:
        'Saga runs AI coding agents as a durable saga on Temporal. Use saga_list and saga_status to see sagas ' +
        'and what they wait for, saga_respond to answer (ask your user first for approvals), saga_start to ' +
        `start one. ${UNTRUSTED_NOTE}`,
    },
  );
  registerReadTools(server, ctx);
  registerActTools(server, ctx);
  registerResources(server, ctx);
  return server;
}
