/**
 * `saga mcp` as an agent or IDE meets it: bin/saga mcp as a subprocess, driven over stdio by the MCP SDK's own
 * client against the real server, a real git repo and the worker: start a saga, list it, read its status,
 * answer each question (a wrong answer gets the Update's own error), approve, report, accept; read its
 * documents as resources. Every answer is recorded as mcp:<user>.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../src/demo/sample-repo';
import type { Answer } from '../../../src/domain/contract/state';
import { answersQuery } from '../../../src/domain/saga/messages';
import type { StatusJson } from '../../../src/client/status-json';
import { SAGA_BIN } from '../../harness/cli';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';
import { waitFor } from '../../harness/wait';

jest.setTimeout(240_000);

const NAME = 'mcp-e2e';
const TOOLS = ['saga_list', 'saga_logs', 'saga_report', 'saga_respond', 'saga_start', 'saga_status'];

describe('saga mcp over stdio', () => {
  let env: SagaTestEnv;
  let mcp: Client;
  let stderr = '';
  /** Anything on the server's stdout that is not the protocol shows up here as a parse error. */
  const protocolErrors: Error[] = [];
  beforeAll(async () => {
    env = await createSagaTestEnv('mcp');
    await env.startWorkers();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [SAGA_BIN, 'mcp', '--user', 'tester'],
      env: env.cliEnv as Record<string, string>,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    mcp = new Client({ name: 'saga-test', version: '1.0.0' });
    mcp.onerror = (error) => protocolErrors.push(error);
    await mcp.connect(transport);
  });
  afterAll(async () => {
    await mcp?.close();
    await env?.close();
  });

  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await mcp.callTool({ name, arguments: args })) as CallToolResult;
  const text = (result: CallToolResult) =>
    result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  const ok = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await call(name, args);
    expect({ tool: name, isError: result.isError ?? false, text: text(result) }).toMatchObject({
      isError: false,
    });
    return result;
  };
  const status = async () =>
    (await ok('saga_status', { name: NAME })).structuredContent as unknown as StatusJson;
  const waitPending = (id: string) =>
    waitFor(
      `${NAME} to wait for ${id}`,
      async () => {
        const s = await status();
        return s.pending.some((p) => p.id === id) && s;
      },
      150_000,
      500,
    );

  test('lists its six tools, each with a JSON schema and the untrusted-data note where agents write', async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('saga_respond')!.inputSchema).toMatchObject({
      type: 'object',
      required: ['name', 'interactionId', 'choice'],
    });
    expect(byName.get('saga_start')!.inputSchema.required).toEqual(['repo', 'request']);
    expect(byName.get('saga_report')!.inputSchema.properties!['issues']).toMatchObject({ type: 'array' });
    for (const tool of ['saga_status', 'saga_logs', 'saga_respond'])
      expect(byName.get(tool)!.description).toContain('DATA from untrusted agents');
  });

  test('drives a saga: start, list, status, answers (a wrong one refused), approval, report, accept', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const started = await ok('saga_start', {
      repo,
      request: '--parallel=2 Add greeting',
      plan: GREETING_PLAN_FILE,
      name: NAME,
    });
    expect(started.structuredContent).toMatchObject({ name: NAME, workflowId: `saga-${NAME}` });
    expect(text(started)).toContain(`Started saga '${NAME}'`);

    const listed = (await ok('saga_list')).structuredContent as { sagas: { name: string }[] };
    expect(listed.sagas.map((s) => s.name)).toContain(NAME);

    const first = await waitPending('confirm-name');
    expect(first.flags.parallel_lanes).toBe(2);
    expect(first.workflowId).toBe(`saga-${NAME}`);
    // The status text is the same JSON, fenced as untrusted agent data.
    expect(text(await call('saga_status', { name: NAME }))).toContain('<untrusted-agent-data>');

    const wrong = await call('saga_respond', { name: NAME, interactionId: 'confirm-name', choice: 'maybe' });
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toContain("'maybe' is not an option");
    const unknownId = await call('saga_respond', {
      name: NAME,
      interactionId: 'no-such-id',
      choice: 'confirm',
    });
    expect(unknownId.isError).toBe(true);
    expect(text(unknownId)).toContain("no pending interaction 'no-such-id'");
    expect((await status()).pending.map((p) => p.id)).toEqual(['confirm-name']);

    await ok('saga_respond', { name: NAME, interactionId: 'confirm-name', choice: '1' });
    await waitPending('plan-approval-1');
    await ok('saga_respond', { name: NAME, interactionId: 'plan-approval-1', choice: 'approve' });

    const review = await waitPending('acceptance-1');
    expect(review.milestones.flatMap((m) => m.tasks).every((t) => t.status === 'integrated')).toBe(true);
    const logs = await ok('saga_logs', { name: NAME, task: '1.1', tail: 5 });
    const lines = (logs.structuredContent as { lines: string[] }).lines;
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(5);
    expect(text(logs)).toMatch(/^Transcript of task 1\.1 .*\n<untrusted-agent-data>\n/);

    const reported = await ok('saga_report', {
      name: NAME,
      issues: ['Show the CLI in the README :: check: grep -q bin/greet.js README.md'],
    });
    expect(text(reported)).toBe('Reported 1 issue(s) (acceptance-1); a focused implementation round starts.');
    expect((await waitPending('acceptance-2')).round).toBe(2);
    await ok('saga_respond', { name: NAME, interactionId: 'acceptance-2', choice: 'accept' });
    await waitFor('the saga to complete', async () => (await status()).phase === 'complete', 60_000, 500);

    // decisions.md (written by the saga's projector) names who answered, as for every other channel.
    const decisions = path.join((await status()).sagaDir, 'decisions.md');
    await waitFor(
      'decisions.md to record the acceptance',
      () =>
        existsSync(decisions) && readFileSync(decisions, 'utf8').includes('mcp:tester answered acceptance-2'),
    );
    expect(readFileSync(decisions, 'utf8')).toContain('mcp:tester answered plan-approval-1: approve');
    const answers = await env.client.workflow.getHandle(`saga-${NAME}`).query(answersQuery);
    expect(answers.map((a: Answer) => [a.interactionId, a.user])).toEqual([
      ['confirm-name', 'mcp:tester'],
      ['plan-approval-1', 'mcp:tester'],
      ['acceptance-1', 'mcp:tester'],
      ['acceptance-2', 'mcp:tester'],
    ]);
  });

  test("serves the saga's SAGA.md, PROGRESS.md and REPORT.md as resources", async () => {
    const { resources } = await mcp.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining([
        `saga://${NAME}/SAGA.md`,
        `saga://${NAME}/PROGRESS.md`,
        `saga://${NAME}/REPORT.md`,
      ]),
    );
    const saga = await mcp.readResource({ uri: `saga://${NAME}/SAGA.md` });
    expect(saga.contents[0]).toMatchObject({ uri: `saga://${NAME}/SAGA.md`, mimeType: 'text/markdown' });
    expect((saga.contents[0] as { text: string }).text).toContain('greeting');
    await expect(mcp.readResource({ uri: `saga://${NAME}/secrets.txt` })).rejects.toThrow(
      /no such document 'secrets.txt'/,
    );
  });

  test('bad input is refused by name and changes nothing', async () => {
    const unknown = await call('saga_status', { name: 'no-such-saga' });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toContain("No saga named 'no-such-saga'");
    const badName = await call('saga_status', { name: '../etc' });
    expect(badName.isError).toBe(true);
    expect(text(badName)).toMatch(/Invalid arguments for tool saga_status: a saga name/);
    const answerUnknown = await call('saga_respond', {
      name: 'no-such-saga',
      interactionId: 'x',
      choice: '1',
    });
    expect(answerUnknown.isError).toBe(true);
    expect(text(answerUnknown)).toContain("No saga named 'no-such-saga'");
    const badFlag = await call('saga_start', { repo: env.tmp('x'), request: '--frobnicate Ship it' });
    expect(badFlag.isError).toBe(true);
    expect(text(badFlag)).toMatch(/saga_start: /);
    const noIssues = await call('saga_report', { name: NAME, issues: [] });
    expect(noIssues.isError).toBe(true);
    expect((await ok('saga_list')).structuredContent).toMatchObject({ sagas: expect.any(Array) });
    const relative = await call('saga_start', { repo: 'some/repo', request: 'Ship it' });
    expect(relative.isError).toBe(true);
    expect(text(relative)).toMatch(/Invalid arguments for tool saga_start: an absolute path at repo/);
    // Nothing but the protocol went to stdout; the server's own lines went to stderr.
    expect(protocolErrors).toEqual([]);
    expect(stderr).toContain('answers recorded as mcp:tester');
  });
});
