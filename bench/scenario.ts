/**
 * A benchmark scenario: a DAG of tasks with known durations, turned into a git repo, a plan file (one
 * milestone, each task owning its own file) and a saga.config.yaml whose only agent is the timed agent.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { benchTaskFile, type AgentRecord } from './timed-agent';

export interface Dag {
  /** Task ref ("1.3") → agent run time in ms (process start to exit). */
  durations: Record<string, number>;
  deps: Record<string, string[]>;
}

export interface BenchRepo {
  repo: string;
  planFile: string;
  durationsFile: string;
  agentLog: string;
  /** Environment the timed agent reads (also used by the naive baseline). */
  agentEnv: Record<string, string>;
}

export const TIMED_AGENT = path.join(__dirname, 'timed-agent.js');

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=Saga bench', '-c', 'user.email=bench@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

export const taskCheck = (ref: string): string => `test -f ${benchTaskFile(ref)}`;

/** A plan task of the benches: the timed agent writes its file, the check finds it. */
export function benchPlanTask(ref: string, dependsOn: string[]): Record<string, unknown> {
  return {
    id: Number(ref.split('.')[1]),
    slug: `t${ref.replace('.', '-')}`,
    title: `Task ${ref}`,
    depends_on: dependsOn,
    scope: `Write ${benchTaskFile(ref)}.`,
    owns: [benchTaskFile(ref)],
    interfaces: 'none',
    validation_method: 'command',
    validation: [{ text: `${ref} wrote its file`, check: taskCheck(ref) }],
    evidence: 'check output',
  };
}

/** n independent tasks of `ms` each. */
export function flatDag(n: number, ms: number): Dag {
  const durations: Record<string, number> = {};
  for (let i = 1; i <= n; i++) durations[`1.${i}`] = ms;
  return { durations, deps: {} };
}

/** Eight 2-second tasks, three levels deep: wide enough for 4 lanes, deep enough for dependencies to matter. */
export function layeredDag(ms: number): Dag {
  const deps: Record<string, string[]> = {
    '1.5': ['1.1'],
    '1.6': ['1.2'],
    '1.7': ['1.3', '1.4'],
    '1.8': ['1.5'],
  };
  const durations: Record<string, number> = {};
  for (let i = 1; i <= 8; i++) durations[`1.${i}`] = ms;
  return { durations, deps };
}

function planFor(name: string, dag: Dag): Record<string, unknown> {
  const refs = Object.keys(dag.durations);
  return {
    name,
    problem: `Benchmark scenario ${name}: ${refs.length} tasks of known durations.`,
    scope: { in: ['out/'], out: [], delegated: [] },
    exit_criteria: [{ id: 'E1', text: 'the repo is there', check: 'test -f README.md' }],
    milestones: [
      {
        id: 1,
        slug: 'bench',
        title: 'Benchmark tasks',
        depends_on: [],
        goal: 'Every task wrote its file.',
        validation: [{ text: 'every task file is there', check: 'test -d out' }],
        tasks: refs.map((ref) => benchPlanTask(ref, dag.deps[ref] ?? [])),
      },
    ],
  };
}

/** What a scenario changes in the timed agent's saga.config.yaml. */
export interface TimedAgentConfig {
  /** The agent profile's name (default `bench`); a preset's name gives it that CLI's session handling. */
  agent?: string;
  /** More fields of the agent's profile (e.g. `output: claude`). */
  profile?: Record<string, unknown>;
  /** More environment for the timed agent (e.g. BENCH_AGENT_STARTS). */
  env?: Record<string, string>;
  /** More top-level settings (e.g. `heartbeat_timeout`). */
  settings?: Record<string, unknown>;
}

/**
 * A git repo whose saga.config.yaml runs the timed agent (task durations from `durations`), and its plan
 * file: the sample every bench saga runs on.
 */
export function writeTimedAgentRepo(
  dir: string,
  name: string,
  durations: Record<string, number>,
  plan: unknown,
  own: TimedAgentConfig = {},
): BenchRepo {
  const repo = path.join(dir, 'repo');
  mkdirSync(repo, { recursive: true });
  const durationsFile = path.join(dir, 'durations.json');
  const agentLog = path.join(dir, 'agents.jsonl');
  writeFileSync(durationsFile, JSON.stringify(durations));
  const agentEnv = { BENCH_DURATIONS: durationsFile, BENCH_AGENT_LOG: agentLog, ...own.env };
  const agent = own.agent ?? 'bench';
  const config = {
    default_agent: agent,
    attempts: 1,
    // The timed agent logs its start and end outside its worktree, which confinement forbids: the
    // orchestration figures are of unconfined runs; the sandbox's own cost per run is `sandbox_added_ms`.
    sandbox: 'none',
    agents: {
      [agent]: { command: ['{node}', TIMED_AGENT], env: agentEnv, subagent_dispatch: true, ...own.profile },
    },
    ...own.settings,
  };
  writeFileSync(path.join(repo, 'README.md'), `# Bench ${name}\n`);
  writeFileSync(path.join(repo, 'saga.config.yaml'), YAML.stringify(config));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'Bench sample');
  const planFile = path.join(dir, 'plan.yaml');
  writeFileSync(planFile, YAML.stringify(plan));
  return { repo, planFile, durationsFile, agentLog, agentEnv };
}

export const writeBenchRepo = (dir: string, name: string, dag: Dag, own: TimedAgentConfig = {}): BenchRepo =>
  writeTimedAgentRepo(dir, name, dag.durations, planFor(name, dag), own);

export const readAgentLog = (file: string): AgentRecord[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AgentRecord)
    : [];
