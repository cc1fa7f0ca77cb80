/**
 * `saga doctor` through bin/saga shows what a CLI's own config adds to its sandbox's network: the endpoints
 * of a Codex config.toml (here in the profile's CODEX_HOME) with where each was read, and, as a warning, one
 * that leads to saga's own Temporal server and stays refused.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { runSaga } from '../../harness/cli';
import { createFleetRepo } from '../../harness/fleet-saga';
import { AGENT_CLI_BIN } from '../../harness/server';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';

let env: SagaTestEnv;
beforeAll(async () => {
  env = await createSagaTestEnv('doctor-cli-network');
});
afterAll(async () => env?.close());

test("saga doctor lists the endpoints of the CLI's own config, and the one it refuses", async () => {
  const dir = env.tmp('codex-doctor');
  const codexHome = path.join(dir, 'agent-home', '.codex');
  mkdirSync(codexHome, { recursive: true });
  const configToml = path.join(codexHome, 'config.toml');
  writeFileSync(
    configToml,
    [
      'model_provider = "local"',
      '[model_providers.local]',
      'base_url = "http://127.0.0.1:11434/v1"',
      '[model_providers.gateway]',
      'base_url = "https://llm-gateway.example.com/openai"',
      '[model_providers.loop]',
      `base_url = "http://${env.address}/v1"`,
    ].join('\n'),
  );
  const { repo } = createFleetRepo(dir, {
    plan: { name: 'codex-doctor' },
    script: {},
    config: YAML.stringify({
      agents: {
        codex: { env: { HOME: path.dirname(codexHome), CODEX_HOME: codexHome, OPENAI_API_KEY: 'x' } },
      },
    }),
  });
  const result = await runSaga(
    ['doctor', '--repo', repo, '--agent', 'codex', '--config', path.join(dir, 'saga.config.yaml')],
    { ...env.cliEnv, PATH: `${AGENT_CLI_BIN}${path.delimiter}${process.env.PATH ?? ''}` },
    180_000,
  );
  const line = result.stdout.split('\n').find((l) => l.includes('agent codex sandbox:')) ?? result.stdout;
  expect(line).toMatch(/^WARN {2}agent codex sandbox: confined by bubblewrap/);
  expect(line).toContain('network only to api.openai.com:443, chatgpt.com:443');
  expect(line).toContain(
    `from its own config: 127.0.0.1:11434 (${configToml}: model_providers.local.base_url), ` +
      `llm-gateway.example.com:443 (${configToml}: model_providers.gateway.base_url)`,
  );
  expect(line).toMatch(
    new RegExp(
      `NOT allowed from its own config: .*model_providers\\.loop\\.base_url .*leads to the Temporal server`,
    ),
  );
});
