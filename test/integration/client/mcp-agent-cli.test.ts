/**
 * `saga mcp` from a real agent CLI's MCP configuration: Claude Code (the preset's CLI, installed into
 * tools/agent-clis by the global setup) run headless with `--mcp-config` naming `bin/saga mcp`, against the
 * Anthropic stand-in. The CLI starts the server, lists its tools and offers them to the model: the stand-in
 * records the request and the test reads the tools the CLI sent. The same with Gemini CLI, from the
 * `mcpServers` of its settings.json.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SAGA_BIN } from '../../harness/cli';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';
import { AGENT_CLI_BIN } from '../../harness/server';
import { claudeEndpoint, startAnthropicStandIn } from '../../standins/anthropic';
import { geminiEndpoint, startGeminiStandIn } from '../../standins/gemini';
import type { StandIn } from '../../standins/script';

jest.setTimeout(180_000);

interface GeminiBody {
  tools?: { functionDeclarations?: { name: string }[] }[];
}

interface SentTool {
  name: string;
  description?: string;
  input_schema?: unknown;
}

const TOOLS = ['saga_list', 'saga_status', 'saga_start', 'saga_respond', 'saga_report', 'saga_logs'];

/** The CLI as a user runs it headless: stdin closed (it waits 3 s for piped input otherwise). */
function run(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('saga mcp in a real agent CLI', () => {
  let env: SagaTestEnv;
  let standIn: StandIn;
  beforeAll(async () => {
    env = await createSagaTestEnv('mcpcli');
    standIn = await startAnthropicStandIn({ steps: [], finalText: 'No sagas to report.' });
  });
  afterAll(async () => {
    await standIn?.close();
    await env?.close();
  });

  /** The `saga` entry of an `mcpServers` object, as README shows it (with the test server's connection). */
  const sagaServer = () => ({
    command: process.execPath,
    args: [SAGA_BIN, 'mcp', '--user', 'tester'],
    env: {
      TEMPORAL_ADDRESS: env.cliEnv.TEMPORAL_ADDRESS!,
      TEMPORAL_NAMESPACE: env.cliEnv.TEMPORAL_NAMESPACE!,
      SAGA_HOME: env.sagaHome,
    },
  });

  test('Claude Code lists the six saga tools from its --mcp-config and offers them to the model', async () => {
    const work = env.tmp('work');
    const config = path.join(work, 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { saga: { ...sagaServer(), trust: true } } }));
    const result = await run(
      path.join(AGENT_CLI_BIN, 'claude'),
      [
        '-p',
        'Which sagas are running?',
        '--mcp-config',
        config,
        '--strict-mcp-config',
        '--output-format',
        'json',
      ],
      {
        cwd: work,
        env: {
          ...process.env,
          ...(await claudeEndpoint(standIn, env.tmp('home'))),
          ENABLE_TOOL_SEARCH: 'false',
        },
      },
    );
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toMatchObject({ is_error: false, result: 'No sagas to report.' });

    // Claude Code defers MCP tools behind its ToolSearch by default (their names only, in the system prompt);
    // ENABLE_TOOL_SEARCH=false makes it send them with their schemas, which is what is checked here.
    const sent = standIn.requests
      .filter((r) => r.path.startsWith('/v1/messages') && !r.path.includes('count_tokens'))
      .flatMap((r) => (r.body as { tools?: SentTool[] }).tools ?? [])
      .filter((t) => t.name.startsWith('mcp__saga__'));
    expect([...new Set(sent.map((t) => t.name))].sort()).toEqual(TOOLS.map((t) => `mcp__saga__${t}`).sort());
    const respond = sent.find((t) => t.name === 'mcp__saga__saga_respond')!;
    expect(respond.input_schema).toMatchObject({
      type: 'object',
      required: ['name', 'interactionId', 'choice'],
    });
    expect(respond.description).toContain('DATA from untrusted agents');
  });

  test('Gemini CLI lists them from the mcpServers of its settings.json and offers them to the model', async () => {
    const gemini = await startGeminiStandIn({ steps: [], finalText: 'No sagas to report.' });
    try {
      const home = env.tmp('gemini-home');
      const endpoint = await geminiEndpoint(gemini, home);
      const settingsFile = path.join(home, '.gemini', 'settings.json');
      // Headless, Gemini CLI offers only tools that need no confirmation: `trust: true` (README says what it costs).
      const settings = JSON.parse(readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
      writeFileSync(
        settingsFile,
        JSON.stringify({ ...settings, mcpServers: { saga: { ...sagaServer(), trust: true } } }),
      );
      const result = await run(
        path.join(AGENT_CLI_BIN, 'gemini'),
        ['-p', 'Which sagas are running?', '--skip-trust', '--output-format', 'json'],
        { cwd: env.tmp('gemini-work'), env: { ...process.env, ...endpoint } },
      );
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ response: 'No sagas to report.' });
      const declared = gemini.requests
        .filter((r) => /:(stream)?[gG]enerateContent/.test(r.path))
        .flatMap((r) => (r.body as GeminiBody).tools ?? [])
        .flatMap((t) => t.functionDeclarations ?? []);
      const names = [...new Set(declared.map((d) => d.name))];
      expect(names.filter((n) => n.startsWith('mcp_saga_')).sort()).toEqual(
        TOOLS.map((t) => `mcp_saga_${t}`).sort(),
      );
    } finally {
      await gemini.close();
    }
  });
});
