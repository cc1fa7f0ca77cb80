/**
 * A fleet for every profile, and prompts that say what the sandbox allows, with a custom-command agent
 * (neither claude nor demo, no `subagent_dispatch` said) running confined in a real saga:
 * - `--parallel=3` runs three tasks at once: peak concurrency from the agents' own start and end stamps,
 *   which each writes in its own worktree (so they land on its branch);
 * - the implementer is told the saga commits, and a commit of its own is indeed refused inside the sandbox;
 * - the plan reviewer, which reads the spec tree where its prompt says it is, can read it;
 * - a planner of the earlier protocol, which answers nothing at stage `criteria`, still plans.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { respond } from '../../../../src/client/saga-client';
import {
  createFleetRepo,
  startApprovedSaga,
  userConfigBeside,
  waitsForUserOrEnded,
} from '../../../harness/fleet-saga';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { SCRIPTED_AGENT, type Stamp } from '../../../harness/scripted-agent';
import { peakConcurrency, readStamps, STAMP_TASKS, stampsPlan } from '../../../harness/stamps';

let env: SagaTestEnv;

beforeAll(async () => {
  env = await createSagaTestEnv('fleet-any-profile');
  await env.startWorkers();
});
afterAll(async () => {
  await env?.close();
});

jest.setTimeout(300_000);

/** A repo whose one agent profile is the scripted agent, by a command of the user's own. */
function scriptedRepo(name: string, files: Record<string, string> = {}) {
  const dir = env.tmp(name);
  const agent = path.join(dir, 'scripted-agent.js');
  writeFileSync(agent, SCRIPTED_AGENT);
  const { repo, planFile } = createFleetRepo(dir, {
    plan: stampsPlan(name),
    script: {},
    files,
    // The sleep makes the runs long enough to overlap whenever the saga starts them together.
    config: `agents:\n  scripted: { command: ["{node}", ${JSON.stringify(agent)}], env: { STAMP_SLEEP_MS: "6000" } }\n`,
  });
  return { repo, planFile };
}

/** Starts the saga as `saga start` would (with the planner unless `planFile`), and confirms its name. */
async function startConfirmed(name: string, repo: string, argumentsText: string, planFile?: string) {
  process.env.SAGA_HOME = env.sagaHome;
  process.env.SAGA_HOST_ID = env.hostId;
  process.env.SAGA_TASK_QUEUE = env.taskQueue;
  const input = await prepareSaga({
    repo,
    argumentsText,
    ...(planFile ? { plan: planFile } : {}),
    name,
    agent: 'scripted',
    config: userConfigBeside(repo),
  });
  await startSaga(env.client, input);
  const answer = (id: string, choice: string) =>
    respond(env.client, name, { interactionId: id, choice, user: 'test' });
  await waitForPending(env, name, 'confirm-name');
  await answer('confirm-name', 'confirm');
  return { input, answer };
}

test('--parallel=3 with a custom profile runs three tasks at once; the implementer is told the saga commits', async () => {
  const name = 'any-profile-lanes';
  const { repo, planFile } = scriptedRepo(name);
  const input = await startApprovedSaga(env, {
    repo,
    planFile,
    name,
    args: '--parallel=3 Three stamps',
    agent: 'scripted',
  });
  const status = await waitForStatus(env, name, waitsForUserOrEnded, 240_000);
  expect(status.pending.map((p) => p.kind)).toEqual(['acceptance']);

  const stamps = readStamps<Stamp>(repo, status.integrationBranch);
  expect(stamps.map((s) => s.task).sort()).toEqual(['1.1', '1.2', '1.3']);
  expect(peakConcurrency(stamps)).toBe(3);
  // What was announced is what ran.
  expect(status.log.some((l) => l.includes('Modes: --parallel=3'))).toBe(true);
  expect(status.executionMode).toBe('inline; parallel (3 lanes)');
  expect(status.log.some((l) => /Parallel lanes are unavailable/.test(l))).toBe(false);

  // The prompt says what the sandbox does: no commit of its own (git's data is read-only), the saga's.
  for (const s of stamps) {
    expect(s.prompt).toEqual({ saysSagaCommits: true, saysMayCommit: false });
    expect(s.ownCommit).toMatch(/^refused/);
  }
  await respond(env.client, input.name, {
    interactionId: status.pending[0]!.id,
    choice: 'accept',
    user: 'test',
  });
  await waitForStatus(env, name, (s) => s.phase === 'complete');
});

test('the plan reviewer reads the spec tree its prompt names, inside the sandbox', async () => {
  const name = 'any-profile-review';
  const { repo, planFile } = scriptedRepo(name);
  const { input, answer } = await startConfirmed(name, repo, '--quality-locked Three stamps', planFile);
  await waitForPending(env, name, 'plan-approval-review', 60_000);
  await answer('plan-approval-review', '[A] Review');
  await waitForPending(env, name, 'plan-approval-1', 120_000);

  const runs = readdirSync(path.join(input.sagaDir, 'runs')).filter((d) => /review-plan/.test(d));
  expect(runs).toHaveLength(1);
  const findings = readFileSync(path.join(input.sagaDir, 'runs', runs[0]!, 'findings.md'), 'utf8');
  // It read SAGA.md and every task spec, each with the text the saga wrote there.
  expect(findings).toMatch(/^CRITICAL: None$/m);
  expect(findings).toContain('- read SAGA.md: # Saga: any-profile-review');
  for (const id of STAMP_TASKS)
    expect(findings).toMatch(new RegExp(`- read milestones/01-stamps/tasks/0${id}-stamp-${id}\\.md: `));
  await answer('plan-approval-1', 'reject');
  await waitForStatus(env, name, (s) => s.phase === 'cancelled');
});

test('a planner of the earlier protocol (nothing at stage criteria) plans, the criteria from its plan, noted once', async () => {
  const name = 'any-profile-old-planner';
  const { repo } = scriptedRepo(name, { '.saga/old-planner-plan.json': JSON.stringify(stampsPlan(name)) });
  const { input, answer } = await startConfirmed(name, repo, 'Three stamps');
  const status = await waitForStatus(
    env,
    name,
    (s) => s.pending.some((p) => p.id !== 'confirm-name'),
    180_000,
  );
  // Before: three runs at stage 'criteria', then "The planner gave an invalid answer 3 times".
  expect(status.pending.map((p) => p.id)).toEqual(['plan-approval-1']);
  const runs = readdirSync(path.join(input.sagaDir, 'runs'));
  expect(runs.filter((d) => d.startsWith('planner-criteria'))).toHaveLength(1);
  expect(runs.filter((d) => d.startsWith('planner-plan'))).toHaveLength(1);
  const note = /The planner answered nothing at stage 'criteria'.*taken from its plan/;
  expect(status.log.filter((l) => note.test(l))).toHaveLength(1);
  const decisions = readFileSync(path.join(input.sagaDir, 'decisions.md'), 'utf8');
  expect(decisions.match(/Planner stage 'criteria' unanswered/g)).toHaveLength(1);
  expect(decisions).toMatch(note);
  // The exit criteria are the plan's own.
  expect(readFileSync(path.join(input.sagaDir, 'SAGA.md'), 'utf8')).toContain('every stamp is there');
  await answer('plan-approval-1', 'reject');
  await waitForStatus(env, name, (s) => s.phase === 'cancelled');
});

test('saga start says up front what the profile refuses (subagent_dispatch: false), and nothing otherwise', async () => {
  const { repo } = scriptedRepo('any-profile-start-notes');
  const single = path.join(path.dirname(repo), 'single.yaml');
  writeFileSync(single, `agents:\n  single: { command: ["{node}", "-e", "0"], subagent_dispatch: false }\n`);
  process.env.SAGA_HOME = env.sagaHome;
  const notes = async (agent: string, config: string) => {
    const lines: string[] = [];
    await prepareSaga({
      repo,
      argumentsText: '--subagents --parallel=3 Go',
      name: `notes-${agent}`,
      agent,
      config,
      // The repository's config (the scripted profile) is the test's own.
      trustRepoConfig: true,
      warn: (line) => lines.push(line),
    });
    return lines.filter((line) => !line.startsWith('--trust-repo-config: '));
  };
  expect(await notes('scripted', userConfigBeside(repo))).toEqual([]);
  expect(await notes('single', single)).toEqual([
    expect.stringMatching(
      /^Note: Subagent execution is unavailable: the agent profile 'single' sets subagent_dispatch: false/,
    ),
  ]);
});
