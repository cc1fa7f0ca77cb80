/**
 * The GitHub forge adapter against a real repository, opt-in and read-only: SAGA_GITHUB_LIVE_REPO=owner/name
 * and GITHUB_TOKEN (a token that may read the repository); GitHub Enterprise through
 * SAGA_GITHUB_LIVE_URL=https://HOST/api/v3. Without them it is skipped, saying why (the only skip allowed).
 */
import { githubForge } from '../../../../src/activities/forge/github';

const liveRepo = process.env.SAGA_GITHUB_LIVE_REPO;
const liveToken = process.env.GITHUB_TOKEN;
const live = liveRepo && liveToken && /^[^/]+\/[^/]+$/.test(liveRepo) ? liveRepo : undefined;
if (!live) {
  console.log(
    'github-forge live test skipped: set SAGA_GITHUB_LIVE_REPO=owner/name and GITHUB_TOKEN to run the GitHub ' +
      'adapter against a real repository (read-only calls).',
  );
}

(live ? describe : describe.skip)('live GitHub (opt-in)', () => {
  test('whoAmI, find a pull request, and the default branch CI with a conditional re-read', async () => {
    const [owner, repo] = (live ?? '/').split('/');
    const url = process.env.SAGA_GITHUB_LIVE_URL ?? 'https://api.github.com';
    const real = githubForge({ kind: 'github', url, owner, repo, tokenEnv: 'GITHUB_TOKEN' }, process.env);
    const me = await real.whoAmI();
    expect(me.login).toMatch(/\S/);
    expect(await real.findPullRequest(`saga-live-test-no-such-branch-${Date.now()}`)).toBeNull();
    const info = await fetch(`${url}/repos/${owner}/${repo}`, {
      headers: { authorization: `Bearer ${liveToken}`, accept: 'application/vnd.github+json' },
    });
    const { default_branch: branch } = (await info.json()) as { default_branch: string };
    const first = await real.ciState(branch);
    if (first === 'not-modified') throw new Error('a first read has no ETag to match');
    expect(['pending', 'success', 'failure']).toContain(first.state);
    expect(await real.ciState(branch, first.etag)).toBe('not-modified');
  });
});
