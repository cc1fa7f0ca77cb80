/** What a repository's saga.config.yaml may set, and the HOME and route limits no config file lifts. */
import { SagaConfigSchema } from '../../../../src/domain/config/config';
import {
  homeProblem,
  mergeConfigObjects,
  repoWideningSettings,
  reservedEndpoints,
  reservedRoute,
  reservedRouteProblems,
  unconfinedParts,
} from '../../../../src/domain/config/trust';

const user = SagaConfigSchema.parse({
  default_agent: 'mine',
  agents: { mine: { command: ['node', 'mine.js'], env: { HOME: '/home/u/agent' } } },
});

describe('repoWideningSettings', () => {
  test('flags, budgets, timeouts, prices and default_agent are the repository’s to set', () => {
    expect(
      repoWideningSettings(
        {
          default_agent: 'claude',
          attempts: 5,
          check_timeout: '20m',
          budget: { saga_usd: 3 },
          prices: { 'm-1': { input: 1, output: 2 } },
          handoff: { max_files: 10 },
          worktree: { port_range_size: 20 },
          agents: { mine: { timeout: '1h', idle_timeout: '5m', model: 'x' }, claude: { timeout: '2h' } },
        },
        user,
      ),
    ).toEqual([]);
  });

  test('what runs or what it reaches is named, each key with its value', () => {
    expect(
      repoWideningSettings(
        {
          sandbox: 'none',
          network: ['example.com:443'],
          pass_env: ['AWS_SECRET_ACCESS_KEY'],
          worktree: { setup: [['npm', 'ci']], root: '/', copy: ['.env'] },
          handoff: { run_hooks: true },
          agents: {
            mine: { command: ['sh', '-c', 'evil'], env: { HOME: '/' }, sandbox: 'none' },
            newbie: { command: ['x'] },
            claude: { pass_env: ['GH_TOKEN'], network: ['localhost:9'] },
          },
        },
        user,
      ),
    ).toEqual([
      'sandbox: "none"',
      'network: ["example.com:443"]',
      'pass_env: ["AWS_SECRET_ACCESS_KEY"]',
      'worktree.setup: [["npm","ci"]]',
      'worktree.root: "/"',
      'worktree.copy: [".env"]',
      'handoff.run_hooks: true',
      'agents.mine.command: ["sh","-c","evil"]',
      'agents.mine.env.HOME: "/"',
      'agents.mine.sandbox: "none"',
      'agents.newbie.command: ["x"]',
      'agents.claude.pass_env: ["GH_TOKEN"]',
      'agents.claude.network: ["localhost:9"]',
    ]);
  });

  test('a value the user’s own config already has widens nothing', () => {
    expect(
      repoWideningSettings(
        {
          sandbox: 'auto',
          worktree: {},
          handoff: { run_hooks: false },
          agents: { mine: { command: ['node', 'mine.js'], env: { HOME: '/home/u/agent' } } },
        },
        user,
      ),
    ).toEqual([]);
  });

  test('default_agent may not pick a profile of the user’s that runs unconfined', () => {
    const withLoose = SagaConfigSchema.parse({
      default_agent: 'mine',
      agents: { mine: { command: ['m'] }, loose: { command: ['l'], sandbox: 'none' } },
    });
    expect(repoWideningSettings({ default_agent: 'loose' }, withLoose)).toEqual(['default_agent: "loose"']);
    expect(repoWideningSettings({ default_agent: 'claude' }, withLoose)).toEqual([]);
  });

  test('the repository’s mappings merge over the user’s; lists are replaced', () => {
    expect(
      mergeConfigObjects(
        { agents: { mine: { command: ['a'], timeout: '1m' } }, network: ['a:1'] },
        { agents: { mine: { timeout: '2m' } }, network: ['b:2'] },
      ),
    ).toEqual({ agents: { mine: { command: ['a'], timeout: '2m' } }, network: ['b:2'] });
  });
});

describe('homeProblem', () => {
  const protect = { userHome: '/home/u', sagaHomes: ['/home/u/.sagas'], repos: ['/src/app'] };
  test.each([
    ['/', 'is /'],
    ['/home', "holds the user's home"],
    ['/home/u/../', "holds the user's home"],
    ['/src', 'holds the repository /src/app'],
    ['/src/app', 'is the repository /src/app'],
  ])('%s is refused', (home, why) => {
    expect(homeProblem(home, protect)).toContain(why);
  });
  test.each(['/home/u', '/home/u/agent-home', '/var/tmp/agent', '/src/app/.agent-home'])(
    '%s is fine',
    (home) => {
      expect(homeProblem(home, protect)).toBeNull();
    },
  );
  test('a folder holding the saga home is refused', () => {
    expect(homeProblem('/data', { ...protect, sagaHomes: ['/data/sagas'] })).toContain('holds the saga home');
  });
});

describe('reserved routes', () => {
  const reserved = reservedEndpoints({ TEMPORAL_ADDRESS: '127.0.0.1:7300', SAGA_CHAT_PORT: '4000' });
  test.each([
    ['localhost', 7300, 'the Temporal server'],
    ['127.0.0.1', 8300, "the Temporal server's Web UI"],
    ['localhost', 7233, 'the Temporal server'],
    ['localhost', 8234, 'the board'],
    ['127.0.0.1', 8888, 'the codec server'],
    ['localhost', 4000, 'the chat bridge'],
  ])('%s:%d leads to %s', (host, port, what) => {
    expect(reservedRoute({ host, port }, reserved)?.what).toBe(what);
  });
  test('other endpoints are not reserved', () => {
    expect(reservedRoute({ host: 'api.anthropic.com', port: 443 }, reserved)).toBeNull();
    expect(reservedRoute({ host: 'localhost', port: 11434 }, reserved)).toBeNull();
  });
  test('a remote Temporal server is reserved at its own name', () => {
    const remote = reservedEndpoints({ TEMPORAL_ADDRESS: 'temporal.internal:7233' });
    expect(reservedRoute({ host: 'temporal.internal', port: 7233 }, remote)?.what).toBe(
      'the Temporal server',
    );
  });
  test('network entries and base URLs of any file are named', () => {
    const config = SagaConfigSchema.parse({
      network: ['localhost:7300'],
      agents: {
        mine: {
          command: ['x'],
          network: ['localhost:8888'],
          env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:7300', HTTPS_PROXY: 'http://localhost:8234' },
        },
      },
    });
    expect(reservedRouteProblems(config, reserved)).toEqual([
      "network: 'localhost:7300' leads to the Temporal server (127.0.0.1:7300); refused",
      "agents.mine.network: 'localhost:8888' leads to the codec server (localhost:8888); refused",
      "agents.mine.env.ANTHROPIC_BASE_URL: 'http://127.0.0.1:7300' leads to the Temporal server (127.0.0.1:7300); refused",
      "agents.mine.env.HTTPS_PROXY: 'http://localhost:8234' leads to the board (localhost:8234); refused",
    ]);
  });
});

test('unconfinedParts names the top level and each profile that runs unconfined', () => {
  const config = SagaConfigSchema.parse({
    agents: { mine: { command: ['x'], sandbox: 'none' }, other: { command: ['y'] } },
  });
  expect(unconfinedParts(config, ['mine', 'other'])).toEqual([
    "agent profile 'mine' (agents.mine.sandbox: none)",
  ]);
  const all = SagaConfigSchema.parse({
    sandbox: 'none',
    agents: { other: { command: ['y'] }, boxed: { command: ['z'], sandbox: 'auto' } },
  });
  expect(unconfinedParts(all, ['boxed', 'other'])).toEqual([
    'checks, set-up commands and every agent profile without a sandbox setting of its own (sandbox: none)',
  ]);
});
