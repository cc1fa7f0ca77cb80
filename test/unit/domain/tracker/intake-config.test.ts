import { SagaConfigSchema } from '../../../../src/domain/config/config';
import { DEFAULT_LINEAR_API } from '../../../../src/domain/config/intake-keys';
import { intakeSettings, trackerConnection } from '../../../../src/domain/tracker/intake-config';
import { IntakeSettingsSchema } from '../../../../src/domain/saga/saga-input';

const config = (raw: unknown) => SagaConfigSchema.parse(raw);

describe('trackerConnection: the tracker a saga from an issue talks to', () => {
  test('GitHub defaults its url; the intake key wins over the forge', () => {
    expect(trackerConnection(config({ intake: { github: { token_env: 'GH_ISSUES' } } }), 'github')).toEqual({
      kind: 'github',
      url: 'https://api.github.com',
      tokenEnv: 'GH_ISSUES',
    });
    const both = config({
      forge: {
        kind: 'github',
        repo: 'acme/app',
        token_env: 'GITHUB_TOKEN',
        url: 'https://ghe.example/api/v3',
      },
      intake: { github: { token_env: 'GH_ISSUES', url: 'https://other.example/api/v3' } },
    });
    expect(trackerConnection(both, 'github')).toEqual({
      kind: 'github',
      url: 'https://other.example/api/v3',
      tokenEnv: 'GH_ISSUES',
    });
  });

  test('GitHub and Gitea fall back to a forge of the same kind only', () => {
    const gitea = config({
      forge: { kind: 'gitea', repo: 'alice/demo', url: 'http://127.0.0.1:3000', token_env: 'GITEA_TOKEN' },
    });
    expect(trackerConnection(gitea, 'gitea')).toEqual({
      kind: 'gitea',
      url: 'http://127.0.0.1:3000',
      tokenEnv: 'GITEA_TOKEN',
    });
    expect(() => trackerConnection(gitea, 'github')).toThrow(
      'intake.github.token_env: a GitHub tracker needs the name of the variable holding its token (or a forge: of kind github)',
    );
  });

  test('a Gitea tracker without a url names the key to set', () => {
    expect(() =>
      trackerConnection(config({ intake: { gitea: { token_env: 'GITEA_TOKEN' } } }), 'gitea'),
    ).toThrow(/^intake\.gitea\.url: a Gitea tracker needs its url/);
    expect(() => trackerConnection(config({}), 'gitea')).toThrow(/^intake\.gitea\.token_env: /);
  });

  test('Linear defaults its API and token variable when intake.linear is absent', () => {
    expect(trackerConnection(config({}), 'linear')).toEqual({
      kind: 'linear',
      url: DEFAULT_LINEAR_API,
      tokenEnv: 'LINEAR_API_KEY',
    });
    expect(
      trackerConnection(
        config({ intake: { linear: { token_env: 'MY_LINEAR', url: 'http://127.0.0.1:9/graphql' } } }),
        'linear',
      ),
    ).toEqual({ kind: 'linear', url: 'http://127.0.0.1:9/graphql', tokenEnv: 'MY_LINEAR' });
  });

  test('intakeSettings: the issue’s tracker and where questions go', () => {
    const settings = intakeSettings(config({ intake: { questions: 'issue' } }), {
      kind: 'linear',
      team: 'ENG',
      number: 4,
    });
    expect(IntakeSettingsSchema.parse(settings)).toEqual({
      tracker: { kind: 'linear', url: DEFAULT_LINEAR_API, tokenEnv: 'LINEAR_API_KEY' },
      questions: 'issue',
    });
    expect(
      intakeSettings(config({ intake: { github: { token_env: 'T' } } }), {
        kind: 'github',
        owner: 'a',
        repo: 'b',
        number: 1,
      }).questions,
    ).toBe('cli');
  });
});
