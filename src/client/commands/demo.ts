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
import { sagaWorkflowId } from '../../domain/saga/naming';
import type { Interaction } from '../../domain/saga/state';
import { createSagaWorkers, defaultSagaHome } from '../../worker/worker';
import { parseArgs } from '../args';
import { getStatus, respond } from '../saga-client';
import { sagaClientInterceptors } from '../connection';
import { ensureDevServer, type Io } from './server';
import { prepareSaga, startSaga } from './start';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the demo "user" answers, and why (printed so the run reads like a session). */
function answerFor(p: Interaction, round: number): { choice: string; text?: string; why: string } {
  switch (p.kind) {
    case 'confirm-name':
      return { choice: 'confirm', why: 'the proposed name is fine' };
    case 'plan-approval':
      return { choice: 'approve', why: 'the plan covers the goal' };
    case 'acceptance':
      return round === 1
        ? {
            choice: 'report issues',
            // With its check (ISSUE :: check: COMMAND): the fix is validated by it, not only by the exit criteria.
            text: 'The README should show how to run bin/greet.js :: check: grep -q "node bin/greet.js" README.md',
            why: 'one review round: report an issue',
          }
        : { choice: 'accept', why: 'the issue is fixed' };
    default:
      return { choice: p.options[p.recommended ?? 0] ?? p.options[0]!, why: 'the recommended option' };
  }
}

export async function demoCommand(argv: string[], io: Io): Promise<number> {
  parseArgs('demo', argv);
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
  try {
    const input = await prepareSaga({
      repo,
      argumentsText: '--subagents --parallel=2 Add a greet(name) function and a CLI that prints it',
      name: `demo-${stamp}`,
    });
    input.uiBaseUrl = dev.uiUrl;
    await startSaga(client, input);
    io.out(
      `Started saga ${input.name}${dev.uiUrl ? ` — watch it: ${dev.uiUrl}/namespaces/${dev.namespace}/workflows/${sagaWorkflowId(input.name)}` : ''}`,
    );

    const answered = new Set<string>();
    let lastLog = '';
    for (;;) {
      const desc = await client.workflow.getHandle(sagaWorkflowId(input.name)).describe();
      if (desc.status.name !== 'RUNNING') break;
      const status = await getStatus(client, input.name);
      const newest = status.log[0] ?? '';
      if (newest !== lastLog) {
        const fresh = status.log.slice(0, Math.max(1, status.log.indexOf(lastLog)));
        for (const line of fresh.reverse()) io.out(`  · ${line.replace(/^\S+ /, '')}`);
        lastLog = newest;
      }
      for (const p of status.pending) {
        if (answered.has(p.id)) continue;
        const a = answerFor(p, status.round);
        io.out(
          `\n? [${p.kind}] ${p.prompt}\n  options: ${p.options.join(' | ')}\n  → ${a.choice}${a.text ? ` — "${a.text}"` : ''} (${a.why})\n`,
        );
        await respond(client, input.name, {
          interactionId: p.id,
          choice: a.choice,
          ...(a.text ? { text: a.text } : {}),
          user: 'demo-user',
        });
        answered.add(p.id);
      }
      await sleep(250);
    }
    const final = await getStatus(client, input.name);
    const seconds = Math.round((Date.now() - started) / 1000);
    io.out(`\nSaga ${input.name}: ${final.phase} in ${seconds}s.`);
    io.out(`Report:          ${path.join(final.sagaDir, 'REPORT.md')}`);
    io.out(`Saga directory:  ${final.sagaDir} (SAGA.md, PROGRESS.md, manifest.md, decisions.md, runs/)`);
    io.out(
      `Branches:        git -C ${repo} branch --list 'saga/*'   (integrated: ${final.integrationBranch})`,
    );
    if (dev.uiUrl)
      io.out(
        `Web UI:          ${dev.uiUrl}/namespaces/${dev.namespace}/workflows?query=SagaName%3D%22${input.name}%22`,
      );
    io.out(`Status:          bin/saga status ${input.name}`);
    const report = readFileSync(path.join(final.sagaDir, 'REPORT.md'), 'utf8');
    io.out(`\n${report.split('\n').slice(0, 30).join('\n')}\n...`);
    return final.phase === 'complete' ? 0 : 1;
  } finally {
    workers.forEach((w) => w.shutdown());
    await Promise.allSettled(running);
    await native.close();
    await connection.close();
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
