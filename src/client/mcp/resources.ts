/** `saga mcp`'s resources: SAGA.md, PROGRESS.md and REPORT.md of each saga, as `saga://NAME/FILE`. */
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SAGA_NAME_PATTERN } from '../../domain/contract/naming';
import { UserError } from '../errors';
import { listSagas } from '../saga-client';
import type { McpContext } from './context';
import { UNTRUSTED_NOTE } from './results';
import { readSagaDocument, sagaDirOf, SAGA_DOCUMENTS, type SagaDocument } from './saga-files';

const ABOUT: Record<SagaDocument, string> = {
  'SAGA.md': 'the saga: its goal, flags and plan',
  'PROGRESS.md': 'progress: milestones, tasks and recent events',
  'REPORT.md': 'the final report for acceptance',
};

export function registerResources(server: McpServer, ctx: McpContext): void {
  const names = async () => (await listSagas(await ctx.connect())).map((s) => s.name);
  const template = new ResourceTemplate('saga://{name}/{file}', {
    list: async () => ({
      resources: (await names()).flatMap((name) =>
        SAGA_DOCUMENTS.map((file) => ({
          uri: `saga://${name}/${file}`,
          name: `${name}/${file}`,
          description: `${ABOUT[file]} of saga ${name}`,
          mimeType: 'text/markdown',
        })),
      ),
    }),
    complete: {
      name: async (value) => (await names()).filter((n) => n.startsWith(value)),
      file: (value) => SAGA_DOCUMENTS.filter((f) => f.startsWith(value)),
    },
  });
  server.registerResource(
    'saga-documents',
    template,
    {
      title: "A saga's SAGA.md, PROGRESS.md or REPORT.md",
      description: `SAGA.md, PROGRESS.md and REPORT.md from a saga's directory. ${UNTRUSTED_NOTE.replace(
        ', inside <untrusted-agent-data> fences',
        '',
      )}`,
      mimeType: 'text/markdown',
    },
    async (uri, variables) => {
      const name = String(variables.name);
      const file = String(variables.file);
      if (!SAGA_NAME_PATTERN.test(name)) throw new UserError(`${uri.href}: '${name}' is not a saga name.`);
      const document = SAGA_DOCUMENTS.find((f) => f === file);
      if (!document)
        throw new UserError(`${uri.href}: no such document '${file}'; one of ${SAGA_DOCUMENTS.join(', ')}.`);
      const text = await readSagaDocument(await sagaDirOf(ctx.connect, name), name, document);
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text }] };
    },
  );
}
