/** `saga mcp`'s reading tools: saga_list, saga_status, saga_logs (they change nothing). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { getStatus, listSagas } from '../saga-client';
import { statusJson } from '../status-json';
import { sagaNameSchema, type McpContext } from './context';
import { dataResult, runTool, textResult, untrusted, UNTRUSTED_NOTE } from './results';
import { sagaDirOf, transcriptTail } from './saga-files';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const;

export function registerReadTools(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'saga_list',
    {
      title: 'List sagas',
      description:
        'Every saga the Temporal server knows, as `saga list --json`: name, workflowId, status, phase, ' +
        'awaitingInput (true when it waits for an answer: see saga_status), startTime.',
      inputSchema: {},
      annotations: READ_ONLY,
    },
    () =>
      runTool('saga_list', ctx.log, async () => {
        const sagas = await listSagas(await ctx.connect());
        return textResult(JSON.stringify(sagas, null, 2), { sagas });
      }),
  );

  server.registerTool(
    'saga_status',
    {
      title: 'Saga status',
      description:
        'The status JSON of `saga status NAME --json`: phase, flags, milestones and tasks, usage and cost, and ' +
        '`pending`: the questions and approvals the saga waits for (each with id, kind, prompt, options, ' +
        `recommended; answer with saga_respond). ${UNTRUSTED_NOTE}`,
      inputSchema: { name: sagaNameSchema },
      annotations: READ_ONLY,
    },
    ({ name }) =>
      runTool('saga_status', ctx.log, async () => {
        const status = statusJson(await getStatus(await ctx.connect(), name));
        return dataResult(`Status of saga ${name}`, status);
      }),
  );

  server.registerTool(
    'saga_logs',
    {
      title: "An agent's transcript",
      description:
        "The last lines of a task agent's newest transcript as readable lines (`saga logs NAME TASK`), terminal " +
        `controls stripped. ${UNTRUSTED_NOTE}`,
      inputSchema: {
        name: sagaNameSchema,
        task: z
          .string()
          .regex(/^(\d+\.\d+|m\d+t\d+)$/, 'a task id like 1.2 (milestone.task) or m1t2')
          .describe('the task id, e.g. 1.2'),
        tail: z
          .number()
          .int()
          .min(1)
          .max(2000)
          .default(200)
          .describe('how many of the last lines (default 200)'),
      },
      annotations: READ_ONLY,
    },
    ({ name, task, tail }) =>
      runTool('saga_logs', ctx.log, async () => {
        const lines = await transcriptTail(await sagaDirOf(ctx.connect, name), task, tail);
        return {
          content: [
            { type: 'text', text: untrusted(`Transcript of task ${task} of saga ${name}`, lines.join('\n')) },
          ],
          structuredContent: { name, task, lines },
        };
      }),
  );
}
