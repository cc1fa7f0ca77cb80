/**
 * The real agent CLIs in the saga's private home: no profile HOME, the worker's own (a fake home set up as
 * a user's, with the CLI's config where the CLI keeps it). Each preset's CLI runs against its stand-in,
 * then resumes that session in a second run of the same saga (the session lives in the saga's private
 * copy of the CLI's state, not in the user's). The user's home stays byte for byte.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { executeAgentRun } from '../../../../src/activities/agents';
import { privateHomeOf } from '../../../../src/activities/sandbox';
import { parseSagaConfigText } from '../../../../src/domain/config/config-text';
import { resolveAgentProfile } from '../../../../src/domain/config/profile-resolution';
import { PROJECT_ROOT } from '../../../../src/project-root';
import { AGENT_CLI_BIN } from '../../../harness/server';
import { claudeEndpoint, startAnthropicStandIn } from '../../../standins/anthropic';
import { geminiEndpoint, startGeminiStandIn } from '../../../standins/gemini';
import { opencodeEndpoint, startOpenAIChatStandIn } from '../../../standins/openai-chat';
import { codexEndpoint, startOpenAIResponsesStandIn } from '../../../standins/openai-responses';
import type { ModelScript, StandIn } from '../../../standins/script';

interface CliCase {
  agent: string;
  start: (script: ModelScript) => Promise<StandIn>;
  endpoint: (standIn: StandIn, home: string) => Promise<Record<string, string>>;
  profile?: Record<string, unknown>;
  /** Its endpoint is only in its config file under the user's home: saga reads it there (no `network:`). */
  endpointInConfigFile?: boolean;
  /** Files the user already has under their home (their CLI's config and state). */
  userFiles?: Record<string, string>;
}

const CASES: CliCase[] = [
  {
    agent: 'claude',
    start: startAnthropicStandIn,
    endpoint: claudeEndpoint,
    // A user who has run Claude Code: its ~/.claude.json (a file the CLI rewrites) is shown as a copy.
    userFiles: {
      '.claude.json': '{"numStartups":3,"mcpServers":{}}\n',
      '.claude/settings.json': '{"env":{"USER_SETTING":"1"}}\n',
    },
  },
  {
    agent: 'codex',
    start: startOpenAIResponsesStandIn,
    endpoint: codexEndpoint,
    profile: { model: 'gpt-5.5' },
    endpointInConfigFile: true,
  },
  { agent: 'gemini', start: startGeminiStandIn, endpoint: geminiEndpoint },
  {
    agent: 'opencode',
    start: startOpenAIChatStandIn,
    endpoint: opencodeEndpoint,
    endpointInConfigFile: true,
  },
];

const SCRIPT: ModelScript = {
  steps: [{ kind: 'write', path: 'alpha.txt', content: 'hello\n' }],
  finalText: 'Wrote alpha.txt.',
};

/** Every file and folder under `dir`, files with a digest of their bytes. */
function tree(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (p: string) => {
    const rel = path.relative(dir, p) || '.';
    if (statSync(p).isDirectory()) {
      found[`${rel}/`] = 'dir';
      for (const e of readdirSync(p)) walk(path.join(p, e));
    } else found[rel] = createHash('sha256').update(readFileSync(p)).digest('hex');
  };
  walk(dir);
  return found;
}

const filesOf = (entries: Record<string, string>) =>
  Object.fromEntries(Object.entries(entries).filter(([p]) => !p.endsWith('/')));

const savedPath = process.env.PATH;
const savedHome = process.env.HOME;
let root: string;
beforeAll(() => {
  process.env.PATH = `${AGENT_CLI_BIN}${path.delimiter}${savedPath ?? ''}`;
  root = mkdtempSync(path.join(os.tmpdir(), 'saga-agent-home-'));
});
afterAll(() => {
  process.env.PATH = savedPath;
  process.env.HOME = savedHome;
  rmSync(root, { recursive: true, force: true });
});

jest.setTimeout(300_000);
// A third-party CLI that stalls once under a loaded machine gets one more go.
jest.retryTimes(1, { logErrorsBeforeRetry: true });

describe.each(CASES)('the $agent preset in the saga private home', (c) => {
  test('runs, resumes its session in a second run, and leaves the user home as it was', async () => {
    const standIn = await c.start(SCRIPT);
    // The user's home, outside /tmp as a real one is, with the CLI set up the way the user would have it.
    const home = mkdtempSync(`/var/tmp/saga-agent-home-${c.agent}-`);
    try {
      for (const [file, content] of Object.entries(c.userFiles ?? {})) {
        mkdirSync(path.dirname(path.join(home, file)), { recursive: true });
        writeFileSync(path.join(home, file), content);
      }
      const { HOME: _home, CODEX_HOME: _codexHome, ...endpointEnv } = await c.endpoint(standIn, home);
      process.env.HOME = home; // the worker's own home
      const before = tree(home);
      const dir = mkdtempSync(path.join(root, `${c.agent}-`));
      const workdir = path.join(dir, 'work');
      mkdirSync(workdir);
      const config = parseSagaConfigText(
        YAML.stringify({
          agents: {
            [c.agent]: {
              ...c.profile,
              timeout: '2m',
              idle_timeout: '90s',
              env: endpointEnv,
            },
          },
        }),
        'saga.config.yaml',
      );
      if (!config.ok) throw new Error(config.errors.join('\n'));
      const sagaDir = path.join(dir, 'saga');
      const run = (label: string, resume?: { sessionId: string }) =>
        executeAgentRun(
          {
            sagaName: 'home',
            sagaDir,
            role: 'implementer',
            stage: 'task',
            taskId: '1.1',
            attempt: resume ? 2 : 1,
            profile: resolveAgentProfile(config.config, c.agent),
            prompt: 'Write alpha.txt containing "hello".',
            workdir,
            runLabel: label,
            ...(resume ? { resume: { ...resume, host: os.hostname(), reason: 'retry' as const } } : {}),
          },
          { nodePath: process.execPath, sagaRoot: PROJECT_ROOT },
          { heartbeat: () => undefined, signal: new AbortController().signal, label: 'test' },
        );
      const transcript = (label: string) =>
        readFileSync(path.join(sagaDir, 'runs', label, 'transcript.log'), 'utf8').slice(-3000);

      const first = await run('a1');
      expect({ exit: first.exitCode, transcript: first.exitCode === 0 ? '' : transcript('a1') }).toEqual({
        exit: 0,
        transcript: '',
      });
      expect(readFileSync(path.join(workdir, 'alpha.txt'), 'utf8')).toBe('hello\n');
      expect(first.sessionId).toMatch(/\S{8,}/);

      const second = await run('a2', { sessionId: first.sessionId! });
      expect({
        exit: second.exitCode,
        resumed: second.resumedSession,
        fallback: second.resumeFallback,
        transcript: second.resumeFallback ? transcript('a2') : '',
      }).toEqual({ exit: 0, resumed: first.sessionId, fallback: null, transcript: '' });

      // The session is in the saga's private copy of the CLI's state; the user's home is as it was: the
      // same files, byte for byte (a state folder the user did not have yet gets an empty mount point).
      expect(existsSync(path.join(privateHomeOf(sagaDir), 'agents', c.agent))).toBe(true);
      expect(filesOf(tree(home))).toEqual(filesOf(before));
    } finally {
      process.env.HOME = savedHome;
      await standIn.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
