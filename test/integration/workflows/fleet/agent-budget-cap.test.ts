/**
 * The saga's remaining budget reaches the real Claude Code CLI as `--max-budget-usd` (docs/PROCEDURE.md §3.14): with a cap
 * below what one model call costs, the CLI stops itself at its cap and saga reads that as a budget stop;
 * with room left, the same preset run edits as usual. The Anthropic stand-in prices nothing: the CLI prices
 * the stand-in's reported tokens itself.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { executeAgentRun } from '../../../../src/activities/agents';
import { resolveAgentProfile } from '../../../../src/domain/config/profile-resolution';
import { parseSagaConfigText } from '../../../../src/domain/config/config-text';
import { PROJECT_ROOT } from '../../../../src/project-root';
import { AGENT_CLI_BIN } from '../../../harness/server';
import { claudeEndpoint, startAnthropicStandIn } from '../../../standins/anthropic';
import type { StandIn } from '../../../standins/script';

let standIn: StandIn;
const savedPath = process.env.PATH;

beforeAll(async () => {
  process.env.PATH = `${AGENT_CLI_BIN}${path.delimiter}${savedPath ?? ''}`;
  standIn = await startAnthropicStandIn({
    steps: [
      { kind: 'write', path: 'alpha.txt', content: 'hello\n' },
      { kind: 'write', path: 'beta.txt', content: 'more\n' },
    ],
    finalText: 'Done.',
  });
});

afterAll(async () => {
  await standIn?.close();
  process.env.PATH = savedPath;
});

jest.setTimeout(200_000);

async function runClaude(label: string, maxBudgetUsd: number) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `saga-budget-cap-${label}-`));
  const home = path.join(dir, 'agent-home');
  mkdirSync(home, { recursive: true });
  const config = parseSagaConfigText(
    YAML.stringify({
      agents: { claude: { timeout: '2m', idle_timeout: '90s', env: await claudeEndpoint(standIn, home) } },
    }),
    'saga.config.yaml',
  );
  if (!config.ok) throw new Error(config.errors.join('\n'));
  const result = await executeAgentRun(
    {
      sagaName: 'cap',
      sagaDir: path.join(dir, 'saga'),
      role: 'implementer',
      stage: 'task',
      taskId: '1.1',
      attempt: 1,
      profile: resolveAgentProfile(config.config, 'claude'),
      prompt: 'Write alpha.txt and beta.txt.',
      workdir: dir,
      runLabel: 'cap-a1',
      maxBudgetUsd,
    },
    { nodePath: process.execPath, sagaRoot: PROJECT_ROOT },
    { heartbeat: () => undefined, signal: new AbortController().signal, label: 'test' },
  );
  return { dir, result };
}

test('a cap below one call: the CLI stops at it, read as a budget stop', async () => {
  const { dir, result } = await runClaude('tight', 0.001);
  expect(result.failure?.kind).toBe('budget');
  expect(result.failure?.message).toContain('--max-budget-usd');
  // It stopped after its first call: the second file was never written.
  expect(() => readFileSync(path.join(dir, 'beta.txt'))).toThrow();
});

test('room left under the cap: the run edits as usual', async () => {
  const { dir, result } = await runClaude('roomy', 5);
  expect(result.failure ?? null).toBeNull();
  expect(result.exitCode).toBe(0);
  expect(readFileSync(path.join(dir, 'beta.txt'), 'utf8')).toBe('more\n');
});
