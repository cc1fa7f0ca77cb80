/** What `saga mcp`'s tools and resources are given: the Temporal client, who answers, and where logs go. */
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { SAGA_NAME_PATTERN } from '../../domain/contract/naming';

export interface McpContext {
  /** The client, connected on first use (no server: each tool says so; the MCP server stays up). */
  connect: () => Promise<Client>;
  /** Recorded with every answer: `mcp:<user>`. */
  user: string;
  /** stderr: stdout is the protocol. */
  log: (line: string) => void;
}

export const sagaNameSchema = z
  .string()
  .regex(
    SAGA_NAME_PATTERN,
    "a saga name: 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit",
  )
  .describe('the saga name, as saga_list shows it');
