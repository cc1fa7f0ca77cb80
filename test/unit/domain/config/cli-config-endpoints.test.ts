/**
 * The endpoints an agent CLI's own config files name: read from real files in a temporary home, as the
 * CLI would find them (CODEX_HOME, XDG_CONFIG_HOME, OPENCODE_CONFIG_CONTENT), with saga's own services and
 * unroutable addresses refused.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configEndpoints, stripJsonComments } from '../../../../src/domain/config/cli-config-endpoints';
import {
  cliConfigNetwork,
  configFormatOf,
  readCliConfigEndpoints,
} from '../../../../src/activities/sandbox/cli-config-network';

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(os.tmpdir(), 'cli-config-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const allowed = (found: { endpoint: { host: string; port: number } | null }[]) =>
  found.flatMap((e) => (e.endpoint ? [`${e.endpoint.host}:${e.endpoint.port}`] : []));

const CODEX_TOML = [
  'model = "gpt-5.5"',
  'model_provider = "local"',
  'openai_base_url = "https://proxy.example.com/v1"',
  '[model_providers.local]',
  'base_url = "http://127.0.0.1:11434/v1"',
  '[model_providers.azure]',
  'base_url = "https://team.openai.azure.com/openai"',
  '[model_providers.saga]',
  'base_url = "http://localhost:7233/v1"',
  '[model_providers.lan]',
  'base_url = "http://192.168.1.20:8000/v1"',
].join('\n');

test('Codex: every provider base_url and openai_base_url of config.toml, from ~/.codex or CODEX_HOME', async () => {
  mkdirSync(path.join(home, '.codex'));
  writeFileSync(path.join(home, '.codex', 'config.toml'), CODEX_TOML);
  const found = await readCliConfigEndpoints('/usr/local/bin/codex', { HOME: home });
  expect(allowed(found)).toEqual(['proxy.example.com:443', '127.0.0.1:11434', 'team.openai.azure.com:443']);
  // The Temporal server is saga's own: no config file opens it. Another machine's bare IP cannot be routed.
  expect(found.filter((e) => e.problem).map((e) => [e.source.split(': ')[1], e.problem])).toEqual([
    ['model_providers.saga.base_url', expect.stringMatching(/leads to the Temporal server .*refused/)],
    ['model_providers.lan.base_url', expect.stringMatching(/give a host name/)],
  ]);
  const elsewhere = path.join(home, 'codex-home');
  mkdirSync(elsewhere);
  writeFileSync(
    path.join(elsewhere, 'config.toml'),
    '[model_providers.x]\nbase_url = "http://127.0.0.1:9/v1"\n',
  );
  expect(allowed(await readCliConfigEndpoints('codex', { HOME: home, CODEX_HOME: elsewhere }))).toEqual([
    '127.0.0.1:9',
  ]);
});

test('opencode: provider baseURL from opencode.json(c) in the config folder and OPENCODE_CONFIG_CONTENT', async () => {
  const dir = path.join(home, 'xdg', 'opencode');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'opencode.jsonc'),
    '{\n // local model\n "provider": {"ollama": {"options": {"baseURL": "http://localhost:11434/v1",},},},\n}',
  );
  const content = JSON.stringify({
    provider: { gw: { options: { baseURL: 'https://gw.example.org:8443/v1' } } },
  });
  const found = await readCliConfigEndpoints('opencode', {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'xdg'),
    OPENCODE_CONFIG_CONTENT: content,
  });
  expect(allowed(found)).toEqual(['localhost:11434', 'gw.example.org:8443']);
  expect(found[1]!.source).toBe('OPENCODE_CONFIG_CONTENT: provider.gw.options.baseURL');
});

test('aider: *-api-base keys and set-env base URLs of ~/.aider.conf.yml', async () => {
  writeFileSync(
    path.join(home, '.aider.conf.yml'),
    'model: openai/local\nopenai-api-base: http://127.0.0.1:8080/v1\nset-env:\n  - ANTHROPIC_BASE_URL=https://llm.corp.example\n  - OTHER=x\n',
  );
  expect(allowed(await readCliConfigEndpoints('aider', { HOME: home }))).toEqual([
    '127.0.0.1:8080',
    'llm.corp.example:443',
  ]);
});

test('a CLI without such files, or a file that does not parse, allows nothing', async () => {
  expect(configFormatOf('claude')).toBeNull();
  expect(await readCliConfigEndpoints('codex', { HOME: home })).toEqual([]);
  const broken = configEndpoints('codex-toml', 'config.toml', 'model_providers = [');
  expect(broken).toEqual([
    expect.objectContaining({ endpoint: null, problem: expect.stringMatching(/^cannot be read/) }),
  ]);
  expect(stripJsonComments('{"a": "http://x//y", /* c */ "b": [1,],}')).toBe(
    '{"a": "http://x//y",  "b": [1]}',
  );
});

test('read once per saga and profile: what is written to the config later does not widen the list', async () => {
  mkdirSync(path.join(home, '.codex'));
  const config = path.join(home, '.codex', 'config.toml');
  writeFileSync(config, '[model_providers.a]\nbase_url = "http://127.0.0.1:5001/v1"\n');
  const privateHome = path.join(home, 'saga', '.home');
  const first = await cliConfigNetwork(privateHome, 'codex', 'codex', { HOME: home });
  writeFileSync(config, '[model_providers.a]\nbase_url = "https://elsewhere.example.com/v1"\n');
  expect(allowed(await cliConfigNetwork(privateHome, 'codex', 'codex', { HOME: home }))).toEqual(
    allowed(first),
  );
  expect(allowed(first)).toEqual(['127.0.0.1:5001']);
});
