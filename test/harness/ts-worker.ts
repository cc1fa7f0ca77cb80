/**
 * Saga workers (workflows + this host's activities) from the TypeScript sources, in a process of their own,
 * so a test can SIGKILL them like a crashed machine. Uses the run's prebuilt workflow bundle.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { WORKFLOW_BUNDLE } from './server';

const ROOT = path.resolve(__dirname, '..', '..');

const WORKER_SCRIPT = `
const fs = require('node:fs');
const swc = require(${JSON.stringify(require.resolve('@swc/core'))});
require.extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
const { NativeConnection, Runtime, DefaultLogger } = require(${JSON.stringify(require.resolve('@temporalio/worker'))});
const { createSagaWorkers } = require(${JSON.stringify(path.join(ROOT, 'src', 'worker', 'worker.ts'))});
(async () => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const workers = await createSagaWorkers({
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE,
    sagaHome: process.env.SAGA_HOME,
    hostId: process.env.SAGA_HOST_ID,
    taskQueue: process.env.SAGA_TASK_QUEUE,
    workflowBundlePath: process.env.WORKFLOW_BUNDLE,
  });
  const runs = workers.map((w) => w.run());
  process.stdout.write('ready\\n');
  await Promise.all(runs);
})().catch((err) => { console.error(err); process.exit(1); });
`;

/** Starts the worker process and resolves once it polls; the caller kills it (SIGKILL in crash tests). */
export async function startWorkerProcess(dir: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const script = path.join(dir, 'worker.js');
  writeFileSync(script, WORKER_SCRIPT);
  const child = spawn(process.execPath, [script], {
    cwd: ROOT,
    env: { ...env, WORKFLOW_BUNDLE },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
  return child;
}
