/**
 * The delivery keys of saga.config.yaml, defined once (domain/config/delivery-keys.ts): read as part of the
 * user's file with errors naming the key, turned into the run settings (`saga start --deliver` included), and
 * refused from a repository's own file unless trusted.
 */
import { SagaConfigSchema } from '../../../../src/domain/config/config';
import { parseSagaConfigText } from '../../../../src/domain/config/config-text';
import { repoSettingRisk, repoWideningSettings } from '../../../../src/domain/config/trust';
import {
  DELIVER_NEEDS_FORGE,
  DeliveryConfigSchema,
  deliverySettings,
} from '../../../../src/domain/delivery/delivery-config';

const GITEA =
  'forge:\n  kind: gitea\n  url: https://git.example.com\n  repo: alice/demo\n  token_env: GITEA_TOKEN\n';

const errorsOf = (text: string) => {
  const parsed = parseSagaConfigText(text, 'saga.config.yaml');
  return parsed.ok ? [] : parsed.errors;
};

describe('the delivery keys in saga.config.yaml', () => {
  test('default to the local ending, and read every key', () => {
    expect(SagaConfigSchema.parse({})).toMatchObject({
      delivery: 'local',
      pr: 'stacked',
      ci_fix_attempts: 2,
      auto_merge: false,
      review_bots: 'list',
    });
    const parsed = parseSagaConfigText(
      `delivery: pr\npr: single\nci_fix_attempts: 4\nauto_merge: true\nreview_bots: act\n${GITEA}`,
      'saga.config.yaml',
    );
    expect(parsed.ok && parsed.config).toMatchObject({
      delivery: 'pr',
      pr: 'single',
      ci_fix_attempts: 4,
      auto_merge: true,
      review_bots: 'act',
      forge: { kind: 'gitea', url: 'https://git.example.com', repo: 'alice/demo', remote: 'origin' },
    });
  });

  test('errors name the key to fix', () => {
    expect(errorsOf('delivery: pr\n')).toEqual([
      'saga.config.yaml: forge: `delivery: pr` needs a `forge:` (kind, repo, token_env; url for Gitea)',
    ]);
    expect(errorsOf('forge: {kind: gitea, repo: alice/demo, token_env: T}\n')).toEqual([
      'saga.config.yaml: forge.url: a Gitea forge needs its url (its web root, e.g. https://git.example.com)',
    ]);
    expect(errorsOf('delivery: prs\n')[0]).toMatch(/^saga\.config\.yaml: delivery: Invalid enum value/);
    expect(errorsOf('forge: {kind: github, repo: acme, token_env: T}\n')).toEqual([
      'saga.config.yaml: forge.repo: must be OWNER/NAME',
    ]);
    expect(errorsOf('forge: {kind: github, repo: a/b, token_env: T, owner: x}\n')).toEqual([
      "saga.config.yaml: forge: unknown setting 'owner'",
    ]);
    expect(errorsOf('ci_fix_attempts: 50\n')[0]).toMatch(/^saga\.config\.yaml: ci_fix_attempts: /);
  });

  test('a token itself, or a URL carrying credentials or another scheme, is refused without echoing it', () => {
    const token = errorsOf('forge: {kind: github, repo: a/b, token_env: ghp_s3cretvalue}\n');
    expect(token).toEqual([
      'saga.config.yaml: forge.token_env: must be an environment variable name (A-Z, 0-9, _)',
    ]);
    const inUrl = errorsOf(
      'forge: {kind: gitea, url: "https://me:s3cret@git.example.com", repo: a/b, token_env: T}\n',
    );
    expect(inUrl).toEqual([
      'saga.config.yaml: forge.url: must not hold a user or password (the token is read from token_env)',
    ]);
    expect(errorsOf('forge: {kind: gitea, url: "file:///etc", repo: a/b, token_env: T}\n')).toEqual([
      'saga.config.yaml: forge.url: must be an http:// or https:// URL',
    ]);
  });
});

test('the forge token is never passed into a sandbox', () => {
  const forge = 'forge: {kind: github, repo: a/b, token_env: GH_DELIVERY}\n';
  expect(errorsOf(`${forge}pass_env: [CI, GH_DELIVERY]\n`)).toEqual([
    'saga.config.yaml: pass_env[1]: is forge.token_env: the forge token is never passed to agents, checks or set-up commands',
  ]);
  expect(errorsOf(`${forge}agents:\n  claude: {pass_env: [GH_DELIVERY]}\n`)).toEqual([
    'saga.config.yaml: agents.claude.pass_env[0]: is forge.token_env: the forge token is never passed to agents, checks or set-up commands',
  ]);
  expect(errorsOf('pass_env: [GH_DELIVERY]\n')).toEqual([]);
});

describe('deliverySettings', () => {
  const local = DeliveryConfigSchema.parse({
    forge: { kind: 'gitea', url: 'http://127.0.0.1:3000', repo: 'alice/demo', token_env: 'GITEA_TOKEN' },
  });

  test('absent with delivery: local; the forge and its options with delivery: pr', () => {
    expect(deliverySettings(local)).toBeUndefined();
    expect(deliverySettings({ ...local, delivery: 'pr', auto_merge: true })).toEqual({
      pr: 'stacked',
      target: {
        kind: 'gitea',
        url: 'http://127.0.0.1:3000',
        owner: 'alice',
        repo: 'demo',
        tokenEnv: 'GITEA_TOKEN',
      },
      remote: 'origin',
      ciFixAttempts: 2,
      autoMerge: true,
      reviewBots: 'list',
      mergeMethod: 'merge',
    });
  });

  test('--deliver asks for pull requests with delivery: local, and needs a forge', () => {
    expect(deliverySettings(local, { deliver: true })?.target.owner).toBe('alice');
    expect(() => deliverySettings(DeliveryConfigSchema.parse({}), { deliver: true })).toThrow(
      DELIVER_NEEDS_FORGE,
    );
  });

  test('a SagaConfig is a delivery config (one definition of the keys)', () => {
    const config = SagaConfigSchema.parse({
      delivery: 'pr',
      forge: { kind: 'github', repo: 'acme/app', token_env: 'GITHUB_TOKEN' },
    });
    expect(deliverySettings(config)?.target.url).toBe('https://api.github.com');
  });
});

describe("a repository's own file", () => {
  const user = SagaConfigSchema.parse({});
  const repoRaw = {
    delivery: 'pr',
    pr: 'single',
    ci_fix_attempts: 5,
    forge: { kind: 'gitea', url: 'https://evil.example', repo: 'x/y', token_env: 'GITHUB_TOKEN' },
    auto_merge: true,
    review_bots: 'act',
  };

  test('may not set delivery, forge, auto_merge or review_bots; pr and ci_fix_attempts are its to set', () => {
    expect(repoWideningSettings(repoRaw, user)).toEqual([
      'delivery: "pr"',
      'forge.kind: "gitea"',
      'forge.url: "https://evil.example"',
      'forge.repo: "x/y"',
      'forge.token_env: "GITHUB_TOKEN"',
      'auto_merge: true',
      'review_bots: "act"',
    ]);
  });

  test('repeating what the user already says widens nothing', () => {
    const same = SagaConfigSchema.parse({ ...repoRaw });
    expect(repoWideningSettings(repoRaw, same)).toEqual([]);
  });

  test('the refusal says what the repository could do', () => {
    expect(repoSettingRisk('forge.url')).toBe('it could send your forge token to another host');
    expect(repoSettingRisk('auto_merge')).toBe('it could merge pull requests without asking you');
    expect(repoSettingRisk('delivery')).toMatch(/push and open pull requests/);
    expect(repoSettingRisk('review_bots')).toMatch(/bots/);
    expect(repoSettingRisk('sandbox')).toBeNull();
  });
});
