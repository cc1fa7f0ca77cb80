/**
 * The sandbox's name catcher and the watch that ends a run which cannot reach its model API: a real
 * resolver (node's, over UDP) asks the catcher's answer, and the watch's rules run on real time, shortened.
 */
import dgram from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import { dnsNameErrorReply, dnsQuestionName } from '../../../../src/activities/sandbox/dns-packet';
import { EndpointRefusedError, NameRefusedError } from '../../../../src/activities/sandbox/network-bridge';
import { NetworkWatch } from '../../../../src/activities/sandbox/network-watch';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a real resolver asking the catcher: the name is read, the answer is "no such name"', async () => {
  const asked: string[] = [];
  const server = dgram.createSocket('udp4');
  server.on('message', (query, from) => {
    const name = dnsQuestionName(query);
    if (name) asked.push(name);
    server.send(dnsNameErrorReply(query), from.port, from.address);
  });
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
  try {
    const resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([`127.0.0.1:${(server.address() as AddressInfo).port}`]);
    await expect(resolver.resolve4('Model-API.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(asked).toEqual(['model-api.example']);
  } finally {
    server.close();
  }
  expect(dnsQuestionName(Buffer.from('not a dns packet at all'))).toBeNull();
});

const refusedHost = (host: string) => new NameRefusedError(host);

test('refused again and again with no connection: stopped, naming the host, the allow-list and the fix', async () => {
  const watch = new NetworkWatch({ profile: 'codex', allowList: ['api.openai.com:443'] }, 1000);
  const stops: string[] = [];
  watch.stopper((reason) => stops.push(reason));
  watch.refused(refusedHost('llm.example'));
  await sleep(700);
  watch.refused(refusedHost('llm.example')); // tried again, late in the wait: still trying
  await sleep(500);
  expect(stops).toHaveLength(1);
  expect(stops[0]).toBe(
    "agent codex could not reach its model API from saga's sandbox: the sandbox refused llm.example (2 times), " +
      "and no connection was made. The sandbox's network allow-list: api.openai.com:443. Fix: if llm.example is " +
      'its model API, allow it: `network: ["llm.example:PORT"]` under agents.codex in saga.config.yaml; ' +
      "run 'saga doctor --agent codex'",
  );
  watch.close();
});

test('a connection made, or one lookup never tried again: not stopped', async () => {
  const connected = new NetworkWatch({ profile: 'x', allowList: [] }, 200);
  const once = new NetworkWatch({ profile: 'y', allowList: [] }, 200);
  const stops: string[] = [];
  for (const w of [connected, once]) w.stopper((reason) => stops.push(reason));
  connected.refused(refusedHost('telemetry.example'));
  connected.connected();
  once.refused(refusedHost('update.example'));
  once.refused(refusedHost('update.example')); // the IPv6 question of the same lookup
  await sleep(120);
  connected.refused(refusedHost('telemetry.example'));
  await sleep(200);
  expect(stops).toEqual([]);
  expect(connected.reason()).toBeNull();
  // What the run failed of, if it failed on its own: an allowed endpoint the worker could not reach.
  once.refused(new EndpointRefusedError('llm.example:443 resolves to 10.0.0.5, an address of this machine'));
  expect(once.reason()).toContain('the allowed endpoint llm.example:443 resolves to 10.0.0.5');
  for (const w of [connected, once]) w.close();
});
