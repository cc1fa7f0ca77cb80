/**
 * Temporal Cloud readiness, checked offline. Cloud takes either an API key (TLS, `authorization: Bearer`)
 * or mTLS (a client certificate signed by the namespace's CA). bin/saga and `saga worker` read both from
 * Temporal's own variables (@temporalio/envconfig: TEMPORAL_API_KEY, TEMPORAL_TLS_*), and here both reach
 * a real TLS-terminating frontend: for the API key, a gRPC proxy in this test in front of the suite's
 * server that refuses calls without the key and records what arrives; for mTLS, a second server stack
 * with the server's own TLS config and a CA made in this test.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { createSampleRepo } from '../../src/demo/sample-repo';
import { runSaga } from '../harness/cli';
import { writeOneTaskPlan } from '../harness/one-task-plan';
import { createSagaTestEnv, type SagaTestEnv } from '../harness/saga-env';
import { ensureBuilt } from '../harness/worker-process';
import { freePortBase, ROOT, stackInfo, startArgs, startStack, stopStack } from './stack';

jest.setTimeout(600_000);

/** A CA, a server certificate for localhost/127.0.0.1 and a client certificate, made with openssl. */
function makeCertificates(dir: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=saga test CA',
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
  );
  const leaf = (name: string, extensions: string) => {
    writeFileSync(path.join(dir, `${name}.ext`), extensions);
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      `/CN=${name === 'server' ? 'localhost' : 'saga-client'}`,
      '-keyout',
      `${name}-key.pem`,
      '-out',
      `${name}.csr`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    );
  };
  // The server's certificate also serves as the services' client certificate between themselves.
  leaf('server', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  leaf('client', 'extendedKeyUsage=clientAuth\n');
}

interface SeenCall {
  method: string;
  authorization: string | undefined;
}

/**
 * A TLS-terminating gRPC frontend like Cloud's API-key endpoint: calls without `Bearer <apiKey>` get
 * UNAUTHENTICATED; the rest go on to `upstream` (plaintext HTTP/2) and back, trailers included.
 */
function apiKeyFrontend(
  tlsDir: string,
  upstream: string,
  apiKey: string,
  seen: SeenCall[],
): http2.Http2SecureServer {
  const backend = http2.connect(`http://${upstream}`);
  backend.on('error', () => undefined);
  const server = http2.createSecureServer({
    key: readFileSync(path.join(tlsDir, 'server-key.pem')),
    cert: readFileSync(path.join(tlsDir, 'server.pem')),
  });
  server.on('stream', (stream, headers) => {
    const method = String(headers[':path']);
    const authorization = headers.authorization as string | undefined;
    seen.push({ method, authorization });
    stream.on('error', () => undefined);
    if (authorization !== `Bearer ${apiKey}`) {
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': '16',
          'grpc-message': 'bad api key',
        },
        { endStream: true },
      );
      return;
    }
    const forwarded: http2.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers))
      if (!name.startsWith(':') && name !== 'authorization') forwarded[name] = value;
    const call = backend.request({ ':method': 'POST', ':path': method, ...forwarded });
    call.on('error', () => stream.destroy());
    let trailers: http2.OutgoingHttpHeaders = {};
    call.on('response', (responseHeaders) => {
      if (stream.destroyed) return;
      const trailersOnly = 'grpc-status' in responseHeaders;
      stream.respond(responseHeaders, trailersOnly ? { endStream: true } : { waitForTrailers: true });
    });
    call.on('trailers', (t) => (trailers = t));
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    call.on('data', (chunk: Buffer) => !stream.destroyed && stream.write(chunk));
    call.on('end', () => !stream.destroyed && !stream.writableEnded && stream.end());
    stream.on('data', (chunk: Buffer) => call.write(chunk));
    stream.on('end', () => call.end());
    stream.on('close', () => !call.closed && call.close());
  });
  server.on('close', () => backend.close());
  return server;
}

describe('Temporal Cloud connection options (offline)', () => {
  let env: SagaTestEnv;
  let tlsDir: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    env = await createSagaTestEnv('cloud');
    await ensureBuilt();
    tlsDir = mkdtempSync(path.join(os.tmpdir(), 'saga-tls-'));
    chmodSync(tlsDir, 0o755);
    makeCertificates(tlsDir);
  });
  afterAll(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await env.close();
    rmSync(tlsDir, { recursive: true, force: true });
  });

  /** `saga worker` with `settings`; resolves once it says it is connected. */
  const startWorker = (hostId: string, settings: NodeJS.ProcessEnv, home: string): Promise<ChildProcess> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'saga'), 'worker', '--host-id', hostId], {
        env: { ...env.cliEnv, ...settings, SAGA_HOME: home, SAGA_HOST_ID: hostId },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let output = '';
      const onData = (d: Buffer) => {
        output += d.toString();
        if (output.includes('connected to')) resolve(child);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`saga worker exited (${code}):\n${output}`)));
    });

  /** A one-task saga driven to completion through bin/saga with `settings`. */
  async function runWholeSaga(name: string, settings: NodeJS.ProcessEnv, home: string, hostId: string) {
    const cli = { ...env.cliEnv, ...settings, SAGA_HOME: home, SAGA_HOST_ID: hostId };
    const ok = async (args: string[]) => {
      const r = await runSaga(args, cli, 120_000);
      expect([args.join(' '), r.code, r.stderr]).toEqual([args.join(' '), 0, '']);
      return r.stdout;
    };
    const dir = env.tmp(name);
    const repo = createSampleRepo(path.join(dir, 'greeting'));
    await ok(startArgs(repo, writeOneTaskPlan(dir, name), name));
    const waitFor = async (id: string) => {
      const deadline = Date.now() + 180_000;
      for (;;) {
        const status = JSON.parse(await ok(['status', name, '--json'])) as {
          pending: { id: string }[];
          phase: string;
        };
        if (id === 'complete' ? status.phase === 'complete' : status.pending.some((p) => p.id === id)) return;
        if (Date.now() > deadline) throw new Error(`${name}: ${id} not reached: ${JSON.stringify(status)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    };
    await waitFor('confirm-name');
    await ok(['respond', name, 'confirm-name', '1']);
    await waitFor('plan-approval-1');
    await ok(['approve', name]);
    await waitFor('acceptance-1');
    await ok(['accept', name]);
    await waitFor('complete');
  }

  test('an API key (TEMPORAL_API_KEY) reaches the CLI and the worker over TLS', async () => {
    const apiKey = `test-key-${process.pid}`;
    const seen: SeenCall[] = [];
    const frontend = apiKeyFrontend(tlsDir, stackInfo().env.TEMPORAL_ADDRESS!, apiKey, seen);
    await new Promise<void>((resolve) => frontend.listen(0, '127.0.0.1', resolve));
    const port = (frontend.address() as { port: number }).port;
    try {
      const settings = {
        TEMPORAL_ADDRESS: `localhost:${port}`,
        TEMPORAL_API_KEY: apiKey,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(tlsDir, 'ca.pem'),
      };
      // A wrong key is refused, and the CLI says it cannot reach the server.
      const refused = await runSaga(['list'], { ...env.cliEnv, ...settings, TEMPORAL_API_KEY: 'wrong' });
      expect(refused.code).not.toBe(0);
      expect(seen.some((c) => c.authorization === 'Bearer wrong')).toBe(true);

      const hostId = `${env.hostId}-apikey`;
      const home = env.tmp('home-apikey');
      const worker = await startWorker(hostId, settings, home);
      await runWholeSaga('cloud-apikey', settings, home, hostId);
      worker.kill('SIGTERM');

      const accepted = seen.filter((c) => c.authorization === `Bearer ${apiKey}`).map((c) => c.method);
      // The CLI's calls and the worker's polls all carried the key.
      for (const method of [
        'StartWorkflowExecution',
        'UpdateWorkflowExecution',
        'PollWorkflowTaskQueue',
        'PollActivityTaskQueue',
        'RespondActivityTaskCompleted',
      ])
        expect([method, accepted.some((m) => m.endsWith(`/${method}`))]).toEqual([method, true]);
      expect(seen.filter((c) => c.authorization === undefined)).toEqual([]);
    } finally {
      await new Promise((resolve) => frontend.close(resolve));
    }
  });

  test('mTLS (TEMPORAL_TLS_CLIENT_CERT_PATH/KEY_PATH) against a server that requires client certificates', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'saga-tls-stack-'));
    chmodSync(dir, 0o755);
    try {
      const settings = await startStack(dir, { portBase: await freePortBase(), tlsDir });
      expect(settings.TEMPORAL_TLS_CLIENT_CERT_PATH).toBe(path.join(tlsDir, 'client.pem'));
      // Without a client certificate the server refuses the connection.
      const {
        TEMPORAL_TLS_CLIENT_CERT_PATH: _cert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: _key,
        ...noCert
      } = settings;
      const refused = await runSaga(['list'], { ...env.cliEnv, ...noCert });
      expect(refused.code).toBe(2);
      const plain = await runSaga(['list'], { ...env.cliEnv, TEMPORAL_ADDRESS: settings.TEMPORAL_ADDRESS });
      expect(plain.code).toBe(2);

      const hostId = `${env.hostId}-mtls`;
      const home = env.tmp('home-mtls');
      const worker = await startWorker(hostId, settings, home);
      await runWholeSaga('cloud-mtls', settings, home, hostId);
      worker.kill('SIGTERM');
    } finally {
      await stopStack(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
