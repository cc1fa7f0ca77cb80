/**
 * `saga demo`: a whole saga on a generated sample repo with the deterministic demo agent, no API keys.
 * It answers every interaction as a user would, printing what the saga asked, and ends with the report.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { dataConverterFromEnv } from '../../codec/config';
import { createSampleRepo } from '../../demo/sample-repo';
import {
  ACCEPTANCE_CHOICE,
  CONFIRM_NAME_CHOICE,
  PLAN_APPROVAL_CHOICE,
} from '../../domain/contract/answer-choices';
import {
  SAGA_BRANCH_PREFIX,
  sagaWorkflowId,
  uiSagaListUrl,
  uiWorkflowUrl,
} from '../../domain/contract/naming';
import { SAGA_FILES } from '../../domain/contract/saga-dir';
import type { Interaction, SagaStatus } from '../../domain/contract/state';
import { stripControls } from '../../domain/text/terminal';
import { createSagaWorkers, defaultSagaHome } from '../../worker/worker';
import type { ParsedArgs } from '../command-decl';
import { getStatus, respond } from '../saga-client';
import { sagaClientInterceptors } from '../connection';
import type { Io } from '../io';
import { ensureDevServer } from './server';
import { prepareSaga, startSaga } from './start';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the demo "user" answers, and why (printed so the run reads like a session). */
function answerFor(p: Interaction, round: number): { choice: string; text?: string; why: string } {
  switch (p.kind) {
    case 'confirm-name':
      return { choice: CONFIRM_NAME_CHOICE.confirm, why: 'the proposed name is fine' };
    case 'plan-approval':
      return { choice: PLAN_APPROVAL_CHOICE.approve, why: 'the plan covers the goal' };
    case 'acceptance':
      return round === 1
        ? {
            choice: ACCEPTANCE_CHOICE.reportIssues,
            // With its check (ISSUE :: check: COMMAND): the fix is validated by it, not only by the exit criteria.
            text: 'The README should show how to run bin/greet.js :: check: grep -q "node bin/greet.js" README.md',
            why: 'one review round: report an issue',
          }
        : { choice: ACCEPTANCE_CHOICE.accept, why: 'the issue is fixed' };
    default:
      return { choice: p.options[p.recommended ?? 0] ?? p.options[0]!, why: 'the recommended option' };
  }
}

type Dev = Awaited<ReturnType<typeof ensureDevServer>>;

export async function demoCommand(_args: ParsedArgs, io: Io): Promise<number> {
  // Read first: a bad codec key fails before a server or a repo is made.
  const dataConverter = dataConverterFromEnv();
  const started = Date.now();
  const sagaHome = defaultSagaHome();
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15).toLowerCase();
  const repo = path.join(sagaHome, 'demo-repos', `greeting-${stamp}`);
  mkdirSync(path.dirname(repo), { recursive: true });
  createSampleRepo(repo, { failFirstAttempt: true });
  io.out(`Sample repo: ${repo}`);

  const dev = await ensureDevServer(io, { sagaHome });
  process.env.TEMPORAL_ADDRESS = dev.address;
  const runtime = await startDemoRuntime(dev, sagaHome, dataConverter);
  try {
    const input = await prepareSaga({
      repo,
      argumentsText: '--subagents --parallel=2 Add a greet(name) function and a CLI that prints it',
      name: `demo-${stamp}`,
    });
    input.uiBaseUrl = dev.uiUrl;
    await startSaga(runtime.client, input);
    io.out(
      `Started saga ${input.name}${dev.uiUrl ? ` — watch it: ${uiWorkflowUrl(dev.uiUrl, dev.namespace, sagaWorkflowId(input.name))}` : ''}`,
    );
    await answerUntilDone(runtime.client, input.name, io);
    const final = await getStatus(runtime.client, input.name);
    printSummary(io, {
      name: input.name,
      final,
      repo,
      dev,
      seconds: Math.round((Date.now() - started) / 1000),
    });
    return final.phase === 'complete' ? 0 : 1;
  } finally {
    await runtime.stop();
    if (dev.server) {
      io.out(
        dev.uiUrl
          ? 'Stopping the embedded server (run `bin/saga dev` to browse the Web UI afterwards; the history is kept).'
          : 'Stopping the embedded server.',
      );
      await dev.server.stop();
    }
  }
}

/** The saga's workers and a client, on the dev server; `stop` shuts both down. */
async function startDemoRuntime(
  dev: Dev,
  sagaHome: string,
  dataConverter: ReturnType<typeof dataConverterFromEnv>,
) {
  const native = await NativeConnection.connect({ address: dev.address });
  const workers = await createSagaWorkers({
    connection: native,
    namespace: dev.namespace,
    sagaHome,
    dataConverter,
  });
  const running = workers.map((w) => w.run());
  const connection = await Connection.connect({
    address: dev.address,
    interceptors: sagaClientInterceptors(),
  });
  const client = new Client({ connection, namespace: dev.namespace, dataConverter });
  const stop = async () => {
    workers.forEach((w) => w.shutdown());
    await Promise.allSettled(running);
    await native.close();
    await connection.close();
  };
  return { client, stop };
}

/** Follows the saga until it ends: prints its new log lines and answers each interaction as it appears. */
async function answerUntilDone(client: Client, name: string, io: Io): Promise<void> {
  const answered = new Set<string>();
  let lastLog = '';
  for (;;) {
    const desc = await client.workflow.getHandle(sagaWorkflowId(name)).describe();
    if (desc.status.name !== 'RUNNING') return;
    const status = await getStatus(client, name);
    const newest = status.log[0] ?? '';
    if (newest !== lastLog) {
      const fresh = status.log.slice(0, Math.max(1, status.log.indexOf(lastLog)));
      for (const line of fresh.reverse()) io.out(stripControls(`  · ${line.replace(/^\S+ /, '')}`));
      lastLog = newest;
    }
    for (const p of status.pending) {
      if (answered.has(p.id)) continue;
      const a = answerFor(p, status.round);
      io.out(
        stripControls(
          `\n? [${p.kind}] ${p.prompt}\n  options: ${p.options.join(' | ')}\n  → ${a.choice}${a.text ? ` — "${a.text}"` : ''} (${a.why})\n`,
        ),
      );
      await respond(client, name, {
        interactionId: p.id,
        choice: a.choice,
        ...(a.text ? { text: a.text } : {}),
        user: 'demo-user',
      });
      answered.add(p.id);
    }
    await sleep(250);
  }
}

function printSummary(
  io: Io,
  run: { name: string; final: SagaStatus; repo: string; dev: Dev; seconds: number },
): void {
  const { name, final, repo, dev } = run;
  io.out(`\nSaga ${name}: ${final.phase} in ${run.seconds}s.`);
  io.out(`Report:          ${path.join(final.sagaDir, SAGA_FILES.report)}`);
  io.out(
    `Saga directory:  ${final.sagaDir} (${SAGA_FILES.saga}, ${SAGA_FILES.progress}, ${SAGA_FILES.manifest}, ${SAGA_FILES.decisions}, runs/)`,
  );
  io.out(
    `Branches:        git -C ${repo} branch --list '${SAGA_BRANCH_PREFIX}*'   (integrated: ${final.integrationBranch})`,
  );
  if (dev.uiUrl) io.out(`Web UI:          ${uiSagaListUrl(dev.uiUrl, dev.namespace, name)}`);
  io.out(`Status:          bin/saga status ${name}`);
  const report = readFileSync(path.join(final.sagaDir, SAGA_FILES.report), 'utf8');
  io.out(`\n${report.split('\n').slice(0, 30).join('\n')}\n...`);
}
