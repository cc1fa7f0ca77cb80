/**
 * The GitHub forge adapter against the GitHub stand-in (test/standins/github/), which checks every request
 * and answer against GitHub's published OpenAPI description and GraphQL schema: a call the description
 * rejects lands in `violations`, asserted empty after each test. CI and reviewers act through the same API
 * with their own tokens, as they would on GitHub. The live test is github-forge-live.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { githubForge } from '../../../../src/activities/forge/github';
import { gitHubHttp } from '../../../../src/activities/forge/github-http';
import type { Forge, ForgeTarget } from '../../../../src/activities/forge/port';
import { type GitHubStandIn, startGitHubStandIn } from '../../../standins/github/server';

const TOKEN_ENV = 'SAGA_TEST_GH_TOKEN';

let gh: GitHubStandIn;
let forge: Forge;
/** Real commits in the stand-in's repository: saga/m1's head, and saga/m2's on top of it. */
let SHA1: string;
let SHA2: string;

const targetOf = (url: string): ForgeTarget => ({
  kind: 'github',
  url,
  owner: 'octo',
  repo: 'widgets',
  tokenEnv: TOKEN_ENV,
});

/** A call by someone else (CI, a reviewer) through the stand-in's API, validated the same way. */
async function as(token: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${gh.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function errorOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

beforeEach(async () => {
  gh = await startGitHubStandIn({ owner: 'octo', repo: 'widgets' });
  forge = githubForge(targetOf(gh.url), { [TOKEN_ENV]: gh.state.owner.token });
  SHA1 = gh.commit('saga/m1', { 'src/parse.ts': 'export const parse = (s: string) => s;\n' });
  SHA2 = gh.commit('saga/m2', { 'src/print.ts': 'export const print = String;\n' }, 'Print', SHA1);
});

afterEach(async () => {
  const { violations } = gh;
  await gh.close();
  expect(violations).toEqual([]);
});

test('find-or-create opens one pull request; a retried create finds it; the body is updated in place', async () => {
  expect(await forge.findPullRequest('saga/m1')).toBeNull();
  const input = { head: 'saga/m1', base: 'main', title: 'M1: parser', body: '- [ ] parses', draft: true };
  const pr = await forge.createPullRequest(input);
  expect(pr).toMatchObject({
    number: 1,
    head: 'saga/m1',
    base: 'main',
    draft: true,
    state: 'open',
    headSha: SHA1,
  });
  expect(pr.htmlUrl).toMatch(/\/pull\/1$/);
  expect(await forge.findPullRequest('saga/m1')).toEqual(pr);
  expect(await forge.createPullRequest(input)).toEqual(pr); // a retry after a lost answer
  expect(gh.state.pulls).toHaveLength(1);

  const stacked = await forge.createPullRequest({ ...input, head: 'saga/m2', base: 'saga/m1', title: 'M2' });
  expect(stacked).toMatchObject({ number: 2, base: 'saga/m1' });

  const updated = await forge.updatePullRequest(1, { body: '- [x] parses' });
  expect(updated).toMatchObject({ number: 1, body: '- [x] parses', title: 'M1: parser' });
  expect((await forge.findPullRequest('saga/m1'))?.body).toBe('- [x] parses');
});

test('a draft is marked ready through GraphQL, once', async () => {
  await forge.createPullRequest({ head: 'saga/m1', base: 'main', title: 'M1', body: '', draft: true });
  expect(await forge.markReady(1)).toMatchObject({ number: 1, draft: false });
  expect(gh.operations.filter((o) => o === 'graphql')).toHaveLength(1);
  expect(await forge.markReady(1)).toMatchObject({ draft: false });
  expect(gh.operations.filter((o) => o === 'graphql')).toHaveLength(1);
});

test('CI: statuses and check runs make the state; neutral and skipped never fail; ETag gives not-modified', async () => {
  const ci = gh.addUser('ci-runner', 'write', 'Bot');
  const status = (state: string, context: string, description: string) =>
    as(ci.token, 'POST', `/repos/octo/widgets/statuses/${SHA1}`, {
      state,
      context,
      description,
      target_url: `https://ci.example/${context}`,
    });
  const run = (name: string, conclusion: string | null, output?: Record<string, string>) =>
    as(ci.token, 'POST', '/repos/octo/widgets/check-runs', {
      name,
      head_sha: SHA1,
      ...(conclusion ? { status: 'completed', conclusion } : { status: 'in_progress' }),
      ...(output ? { output } : {}),
    });

  expect(await forge.ciState(SHA1)).toMatchObject({ sha: SHA1, state: 'pending', checks: [] });
  expect((await status('pending', 'build', 'running')).status).toBe(201);
  expect((await run('lint', 'neutral', { title: 'no linter', summary: 'nothing to lint' })).status).toBe(201);
  expect((await run('docs', 'skipped')).status).toBe(201);
  expect(await forge.ciState(SHA1)).toMatchObject({ state: 'pending' });

  await status('success', 'build', 'built');
  const green = await forge.ciState(SHA1);
  if (green === 'not-modified') throw new Error('expected a state');
  expect(green.state).toBe('success');
  expect(green.checks.map((c) => [c.name, c.state]).sort()).toEqual([
    ['build', 'success'],
    ['docs', 'skipped'],
    ['lint', 'neutral'],
  ]);
  expect(green.checks.find((c) => c.name === 'build')?.targetUrl).toBe('https://ci.example/build');
  expect(green.etag).not.toBeNull();
  const before = gh.operations.length;
  expect(await forge.ciState(SHA1, green.etag)).toBe('not-modified');
  // A poll that finds nothing new is two conditional reads (GitHub does not count a 304 against the limit).
  expect(gh.operations.slice(before)).toEqual(['repos/get-combined-status-for-ref', 'checks/list-for-ref']);

  await run('test', 'failure', {
    title: '2 tests failed',
    summary: 'FAIL test/parse.test.ts',
    text: 'expected 1, got 2',
  });
  const red = await forge.ciState(SHA1, green.etag);
  if (red === 'not-modified') throw new Error('a new check run must change the state');
  expect(red.state).toBe('failure');
  const failing = red.checks.find((c) => c.name === 'test');
  expect(failing).toMatchObject({ state: 'failure', description: '2 tests failed' });
  expect(failing?.logExcerpt).toContain('FAIL test/parse.test.ts');
  expect(failing?.logExcerpt).toContain('expected 1, got 2');

  await run('test', 'timed_out', { title: 'timed out', summary: 'killed after 10 min' });
  const timedOut = await forge.ciState(SHA1);
  expect(timedOut !== 'not-modified' && timedOut.checks.find((c) => c.name === 'test')?.state).toBe(
    'failure',
  );
});

test('review comments carry their thread, resolution, author rights and bots; a reply lands in the thread', async () => {
  await forge.createPullRequest({ head: 'saga/m1', base: 'main', title: 'M1', body: '', draft: true });
  const rita = gh.addUser('rita', 'write');
  const oscar = gh.addUser('oscar', 'none');
  const bot = gh.addUser('lint-bot[bot]', 'write', 'Bot');
  const comment = async (token: string, body: Record<string, unknown>) => {
    const res = await as(token, 'POST', '/repos/octo/widgets/pulls/1/comments', body);
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: number }).id;
  };
  const at = (line: number) => ({ commit_id: SHA1, path: 'src/parse.ts', line, side: 'RIGHT' });
  const ritaId = await comment(rita.token, { body: 'Handle empty input', ...at(3) });
  const followUpRes = await as(
    gh.state.owner.token,
    'POST',
    `/repos/octo/widgets/pulls/1/comments/${ritaId}/replies`,
    {
      body: 'Agreed',
    },
  );
  expect(followUpRes.status).toBe(201);
  const followUp = ((await followUpRes.json()) as { id: number }).id;
  await comment(oscar.token, { body: 'Rename this', ...at(7) });
  const botId = await comment(bot.token, { body: 'Unused import', ...at(1) });
  const botThread = gh.state.comments.find((c) => c.id === botId)?.threadId;
  const resolve = await as(gh.state.owner.token, 'POST', '/graphql', {
    query: 'mutation($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { isResolved } } }',
    variables: { id: botThread },
  });
  expect(resolve.status).toBe(200);

  const comments = await forge.reviewComments(1);
  const byAuthor = (login: string) => comments.filter((c) => c.author === login);
  expect(byAuthor('rita')[0]).toMatchObject({
    id: ritaId,
    authorCanWrite: true,
    isBot: false,
    path: 'src/parse.ts',
    line: 3,
    body: 'Handle empty input',
    commitSha: SHA1,
    resolved: false,
  });
  expect(byAuthor('octo')[0]).toMatchObject({ id: followUp, threadId: byAuthor('rita')[0].threadId });
  expect(byAuthor('oscar')[0]).toMatchObject({ authorCanWrite: false, isBot: false, resolved: false });
  expect(byAuthor('lint-bot[bot]')[0]).toMatchObject({ isBot: true, resolved: true, threadId: botThread });

  // Replying to the follow-up goes to the thread's first comment, as GitHub requires.
  await forge.reply(1, byAuthor('octo')[0], `Fixed in ${SHA2.slice(0, 7)}`);
  const reply = gh.state.comments[gh.state.comments.length - 1];
  expect(reply).toMatchObject({
    inReplyTo: ritaId,
    threadId: byAuthor('rita')[0].threadId,
    body: `Fixed in ${SHA2.slice(0, 7)}`,
  });
});

test('merge: with the expected head sha through the merge API; protection and a moved head give the reason', async () => {
  gh.state.requiredContexts = ['build'];
  await forge.createPullRequest({ head: 'saga/m1', base: 'main', title: 'M1', body: '', draft: true });
  expect(await forge.merge(1, 'squash', SHA1)).toEqual({
    merged: false,
    message: 'Pull Request is still a draft',
  });
  await forge.markReady(1);
  expect(await forge.merge(1, 'squash', SHA1)).toEqual({
    merged: false,
    message: 'Required status check "build" is expected.',
  });
  await as(gh.state.owner.token, 'POST', `/repos/octo/widgets/statuses/${SHA1}`, {
    state: 'success',
    context: 'build',
  });
  const moved = await forge.merge(1, 'squash', SHA2);
  expect(moved).toEqual({
    merged: false,
    message: 'Head branch was modified. Review and try the merge again.',
  });
  expect(await forge.merge(1, 'squash', SHA1)).toEqual({
    merged: true,
    message: 'Pull Request successfully merged',
  });
  expect(await forge.findPullRequest('saga/m1')).toMatchObject({ number: 1, state: 'merged' });
});

test('whoAmI; errors name the call, the status and the message, never the token', async () => {
  expect(await forge.whoAmI()).toEqual({ login: 'octo', canPush: true });
  const reader = gh.addUser('reader', 'read');
  expect(await githubForge(targetOf(gh.url), { [TOKEN_ENV]: reader.token }).whoAmI()).toEqual({
    login: 'reader',
    canPush: false,
  });

  const error = await errorOf(forge.updatePullRequest(99, { body: 'x' }));
  expect(error.message).toBe(
    'GitHub update pull request (PATCH /repos/octo/widgets/pulls/99) failed: 404 Not Found',
  );
  const denied = await errorOf(githubForge(targetOf(gh.url), { [TOKEN_ENV]: 'ghp_wrong' }).whoAmI());
  expect(denied.message).toBe(
    'GitHub read authenticated user (GET /user) failed: 401 Requires authentication',
  );
  expect(denied.message).not.toContain('ghp_wrong');
  const unset = await errorOf(githubForge(targetOf(gh.url), {}).whoAmI());
  expect(unset.message).toContain(`${TOKEN_ENV} (the token) is not set`);

  for (const req of gh.requests) {
    expect(req.path).not.toContain(gh.state.owner.token);
    expect(String(req.headers.authorization)).toMatch(/^Bearer /);
  }
});

test("the stand-in refuses what GitHub's description refuses (422, recorded)", async () => {
  const res = await as(gh.state.owner.token, 'POST', '/repos/octo/widgets/pulls', {
    head: 'saga/m1',
    base: 'main',
    draft: 'yes',
  });
  expect(res.status).toBe(422);
  expect(((await res.json()) as { message: string }).message).toContain('/draft must be boolean');
  const bad = await as(gh.state.owner.token, 'POST', '/graphql', {
    query: '{ repository(owner: "octo") { nope } }',
  });
  expect(bad.status).toBe(422);
  expect(gh.violations.length).toBeGreaterThanOrEqual(2);
  gh.violations.length = 0; // seen: the validator works
});

test('every call has a timeout: a forge that never answers is an error naming the call', async () => {
  const silent = http.createServer(() => undefined); // takes the request, never answers
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as AddressInfo;
  try {
    const client = gitHubHttp(targetOf(`http://127.0.0.1:${port}`), { [TOKEN_ENV]: 'ghp_secret' }, 300);
    const error = await errorOf(
      client.rest({ call: 'read authenticated user', method: 'GET', path: '/user', schema: z.unknown() }),
    );
    expect(error.message).toBe('GitHub read authenticated user (GET /user): no answer within 300 ms');
  } finally {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  }
});
