/**
 * `saga mcp`'s acting tools: saga_start (the same start path as `saga start`), saga_respond and saga_report
 * (the same validated respond Update as the CLI, recorded as `mcp:<user>`).
 */
import path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { parseIssueLines } from '../../domain/planning/acceptance-issues';
import { ACCEPTANCE_CHOICE } from '../../domain/contract/answer-choices';
import { sagaWorkflowId, uiWorkflowUrl } from '../../domain/contract/naming';
import { announceModes } from '../../domain/request/mode-resolution';
import { prepareSaga, startSaga } from '../commands/start';
import { connectionSettings, uiUrlFor } from '../connection';
import { respond, respondToKind } from '../saga-client';
import { sagaNameSchema, type McpContext } from './context';
import { errorResult, runTool, textResult, UNTRUSTED_NOTE } from './results';

/** The server's working directory is not the user's: a relative path would name another place. */
const absolutePath = z
  .string()
  .min(1)
  .refine((p) => path.isAbsolute(p), 'an absolute path');

const ACTS = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;

export function registerActTools(server: McpServer, ctx: McpContext): void {
  registerStart(server, ctx);
  server.registerTool(
    'saga_respond',
    {
      title: 'Answer a saga',
      description:
        'Answers one pending interaction of a saga (an id from saga_status `pending`), as `saga respond`: the ' +
        'choice by number (1-based), option text or [X] key, plus free text where the option needs it. The ' +
        "saga validates it: a wrong option or id is refused with the saga's own message and changes nothing. " +
        'Recorded as answered by mcp:<user>. Ask your user before answering an approval on their behalf. ' +
        UNTRUSTED_NOTE,
      inputSchema: {
        name: sagaNameSchema,
        interactionId: z.string().min(1).describe('the pending interaction id, e.g. confirm-name'),
        choice: z.string().min(1).describe('option number (1-based), option text or [X] key'),
        text: z.string().max(20_000).optional().describe('free text sent with the choice'),
      },
      annotations: ACTS,
    },
    ({ name, interactionId, choice, text }) =>
      runTool('saga_respond', ctx.log, async () => {
        const answer = await respond(await ctx.connect(), name, {
          interactionId,
          choice,
          ...(text !== undefined ? { text } : {}),
          user: ctx.user,
        });
        return textResult(`Answered ${answer.interactionId} of saga ${name}: ${answer.choice}.`, { answer });
      }),
  );
  server.registerTool(
    'saga_report',
    {
      title: 'Report issues at acceptance',
      description:
        'Reports issues found in acceptance, as `saga report NAME --issue ...`: the saga runs a focused round ' +
        'on them. Each issue is one line; "TEXT :: check: COMMAND" adds the command that shows it fixed (issues ' +
        'without one: the saga asks for their checks first). Recorded as answered by mcp:<user>.',
      inputSchema: {
        name: sagaNameSchema,
        issues: z.array(z.string().min(1).max(4000)).min(1).max(50).describe('the issues, one each'),
      },
      annotations: ACTS,
    },
    ({ name, issues }) =>
      runTool('saga_report', ctx.log, async () => {
        const lines = issues.map((i) => i.replace(/\s+/g, ' ').trim()).filter(Boolean);
        if (!lines.length) return errorResult('saga_report: every issue was blank; give at least one.');
        const answer = await respondToKind(
          await ctx.connect(),
          name,
          'acceptance',
          ACCEPTANCE_CHOICE.reportIssues,
          { text: lines.join('\n'), user: ctx.user },
        );
        // The Update's validator accepted the text, so it parses.
        const parsed = parseIssueLines(lines.join('\n'));
        const unchecked = parsed.ok ? parsed.value.filter((i) => i.check === null).length : 0;
        const next = unchecked
          ? `${unchecked} without a check: the saga asks for their checks first (see saga_status).`
          : 'a focused implementation round starts.';
        return textResult(`Reported ${lines.length} issue(s) (${answer.interactionId}); ${next}`, {
          answer,
          uncheckedIssues: unchecked,
        });
      }),
  );
}

function registerStart(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'saga_start',
    {
      title: 'Start a saga',
      description:
        'Starts a saga on a git repository, as `saga start --repo REPO -- "REQUEST"`: REQUEST is the ' +
        'slash-command text, flags then the goal (e.g. "--parallel=2 Ship dark mode"). Returns its name, ' +
        'workflowId and Web UI url. The saga first waits for its name to be confirmed (interaction ' +
        'confirm-name: saga_respond), then plans and asks for the plan approval.',
      inputSchema: {
        repo: absolutePath.describe('absolute path of the git repository to work on'),
        request: z
          .string()
          .min(1)
          .max(20_000)
          .describe('flags then the goal, e.g. "--autonomous Ship dark mode"'),
        name: sagaNameSchema.optional().describe('name of the saga (default: from the goal)'),
        agent: z.string().min(1).optional().describe('agent profile for the tasks'),
        plan: absolutePath.optional().describe('absolute path of a plan file to use instead of planning'),
      },
      annotations: ACTS,
    },
    (args) =>
      runTool('saga_start', ctx.log, async () => {
        // As saga start: routes to the server are refused in the config (domain/config/trust.ts).
        process.env.TEMPORAL_ADDRESS ||= connectionSettings().address;
        const warnings: string[] = [];
        const input = await prepareSaga({
          repo: args.repo,
          argumentsText: args.request,
          ...(args.plan ? { plan: args.plan } : {}),
          ...(args.agent ? { agent: args.agent } : {}),
          ...(args.name ? { name: args.name } : {}),
          warn: (line) => {
            warnings.push(line);
            ctx.log(line);
          },
        });
        const client = await ctx.connect();
        input.uiBaseUrl = uiUrlFor(connectionSettings().address);
        await startSaga(client, input);
        const workflowId = sagaWorkflowId(input.name);
        const uiUrl = input.uiBaseUrl
          ? uiWorkflowUrl(input.uiBaseUrl, client.options.namespace, workflowId)
          : null;
        const modes = announceModes(input.flags, { product: 'Saga', workflow: 'saga' });
        return textResult(
          [
            modes,
            ...warnings,
            `Started saga '${input.name}' (workflow ${workflowId}).`,
            ...(uiUrl ? [`Web UI: ${uiUrl}`] : []),
            `It waits for its name to be confirmed: saga_respond {name: "${input.name}", interactionId: "confirm-name", choice: "confirm"}.`,
          ].join('\n'),
          { name: input.name, workflowId, uiUrl, warnings },
        );
      }),
  );
}
