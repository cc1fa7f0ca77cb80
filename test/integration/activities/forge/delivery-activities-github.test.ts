/**
 * The delivery activities' forge side (look, reply, body, ready, merge) on the GitHub adapter, against the
 * GitHub stand-in (test/standins/github/), which checks every request and answer against GitHub's published
 * OpenAPI description and GraphQL schema (`violations`, asserted empty after each test). CI and reviewers
 * act through the same API with their own tokens, as on GitHub. The stand-in holds no git: pushing and
 * landing a fix are tested on the real Gitea (delivery-activities.test.ts).
 */
import {
  createForgeActivities,
  type ForgeActivities,
} from '../../../../src/activities/forge/delivery-activities';
import { githubForge } from '../../../../src/activities/forge/github';
import type { ForgeTarget, PullRequest } from '../../../../src/activities/forge/port';
import { sagaPrBody } from '../../../harness/delivery-repo';
import { type GitHubStandIn, startGitHubStandIn } from '../../../standins/github/server';

/** The comments a look read (this test never passes a comment count, so every look reads them). */
function read<T>(comments: T[] | 'unchanged'): T[] {
  if (comments === 'unchanged') throw new Error('the look did not read the comments');
  return comments;
}

/** Real commits in the stand-in's repository (set in beforeEach): M1's head, and M2's on top of it. */
let SHA1: string;
let SHA2: string;
const M1 = 'saga/greet/deliver-m1';
const M2 = 'saga/greet/deliver-m2';
const TOKEN_ENV = 'SAGA_TEST_GH_DELIVERY_TOKEN';

let gh: GitHubStandIn;
let acts: ForgeActivities;
let target: ForgeTarget;
let prs: PullRequest[];

/** A call by someone else (CI, a reviewer) through the stand-in's API, validated the same way. */
async function as(token: string, method: string, path: string, body?: unknown): Promise<Response> {
  const res = await fetch(`${gh.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status).toBeLessThan(300);
  return res;
}

const status = (sha: string, state: string, context: string) =>
  as(gh.state.owner.token, 'POST', `/repos/octo/widgets/statuses/${sha}`, {
    state,
    context,
    description: `${context}: ${state}`,
    target_url: `https://ci.example/${context}`,
  });

beforeEach(async () => {
  gh = await startGitHubStandIn({ owner: 'octo', repo: 'widgets' });
  target = { kind: 'github', url: gh.url, owner: 'octo', repo: 'widgets', tokenEnv: TOKEN_ENV };
  const env = { [TOKEN_ENV]: gh.state.owner.token };
  acts = createForgeActivities({ env: () => env });
  // What deliverMilestone left on GitHub: two pushed delivery branches and their stacked draft PRs.
  SHA1 = gh.commit(M1, { 'src/greet.ts': 'export const greet = () => "hi";\n' }, 'Greet');
  SHA2 = gh.commit(M2, { 'src/farewell.ts': 'export const bye = () => "bye";\n' }, 'Farewell', SHA1);
  const forge = githubForge(target, env);
  prs = [
    await forge.createPullRequest({ head: M1, base: 'main', title: 'm1', body: sagaPrBody(1), draft: true }),
    await forge.createPullRequest({ head: M2, base: M1, title: 'm2', body: sagaPrBody(2), draft: true }),
  ];
});

afterEach(async () => {
  const { violations } = gh;
  await gh.close();
  expect(violations).toEqual([]);
});

test('a look: the PR, its CI (conditional next time) and review comments with rights, in few calls', async () => {
  await status(SHA1, 'failure', 'build');
  const rita = gh.addUser('rita', 'write');
  const oscar = gh.addUser('oscar', 'read');
  const at = (line: number) => ({ commit_id: SHA1, path: 'src/greet.ts', line, side: 'RIGHT' });
  await as(rita.token, 'POST', '/repos/octo/widgets/pulls/1/comments', { body: 'say hi', ...at(2) });
  await as(oscar.token, 'POST', '/repos/octo/widgets/pulls/1/comments', { body: 'say yo', ...at(3) });

  const before = gh.operations.length;
  const [look] = await acts.lookAtPullRequests({
    target,
    prs: [{ number: 1, headSha: SHA1, etag: null }],
  });
  const calls = gh.operations.slice(before);
  console.log(`GitHub: one look at one PR with two commenters cost ${calls.length} calls`, calls);
  expect(calls.sort()).toEqual(
    [
      'pulls/get',
      'repos/get-combined-status-for-ref',
      'checks/list-for-ref',
      'pulls/list-review-comments',
      'graphql',
      'repos/get-collaborator-permission-level',
      'repos/get-collaborator-permission-level',
    ].sort(),
  );
  expect(look!.pullRequest).toMatchObject({ number: 1, head: M1, headSha: SHA1, draft: true });
  if (look!.ci === 'not-modified') throw new Error('the first look has no etag');
  expect(look!.ci.state).toBe('failure');
  expect(look!.ci.checks).toEqual([
    expect.objectContaining({ name: 'build', state: 'failure', targetUrl: 'https://ci.example/build' }),
  ]);
  const by = (login: string) => read(look!.comments).find((c) => c.author === login);
  expect(by('rita')).toMatchObject({ authorCanWrite: true, line: 2, body: 'say hi', resolved: false });
  expect(by('oscar')).toMatchObject({ authorCanWrite: false, line: 3 });

  // Nothing new: the CI reads are conditional and come back not-modified.
  const [again] = await acts.lookAtPullRequests({
    target,
    prs: [{ number: 1, headSha: SHA1, etag: look!.ci.etag }],
  });
  expect(again!.ci).toBe('not-modified');

  // A PR nobody commented on: no GraphQL question about its threads.
  const quiet = gh.operations.length;
  const [second] = await acts.lookAtPullRequests({ target, prs: [{ number: 2, headSha: SHA2, etag: null }] });
  expect(read(second!.comments)).toEqual([]);
  expect(gh.operations.slice(quiet)).toHaveLength(4);
  expect(gh.operations.slice(quiet)).not.toContain('graphql');
});

test('replyToReview lands in the thread once; the body is updated in place; drafts marked ready', async () => {
  const rita = gh.addUser('rita', 'write');
  await as(rita.token, 'POST', '/repos/octo/widgets/pulls/1/comments', {
    body: 'say hi',
    commit_id: SHA1,
    path: 'src/greet.ts',
    line: 2,
    side: 'RIGHT',
  });
  const [look] = await acts.lookAtPullRequests({ target, prs: [{ number: 1, headSha: SHA1, etag: null }] });
  const comment = read(look!.comments)[0]!;
  const reply = { target, number: 1, comment, body: `Fixed in ${SHA2.slice(0, 7)}.` };
  await acts.replyToReview(reply);
  await acts.replyToReview(reply); // a retry after a lost answer
  const replies = gh.state.comments.filter((c) => c.body === reply.body);
  expect(replies).toHaveLength(1);
  expect(replies[0]).toMatchObject({ inReplyTo: comment.id, threadId: comment.threadId });

  await as(gh.state.owner.token, 'PATCH', '/repos/octo/widgets/pulls/1', {
    body: `A person's note\n\n${prs[0]!.body}`,
  });
  const updated = await acts.updatePullRequestBody({ target, number: 1, body: sagaPrBody(1, 'passed') });
  expect(updated.body).toBe(`A person's note\n\n${sagaPrBody(1, 'passed')}`);
  const ready = await acts.markReady({ target, numbers: [1, 2] });
  expect(ready.map((p) => p.draft)).toEqual([false, false]);
});

test('mergePullRequests: protection refuses with GitHub’s reason; then both merge in order, m2 retargeted', async () => {
  gh.state.requiredContexts = ['build'];
  await acts.markReady({ target, numbers: [1, 2] });
  const input = {
    target,
    prs: prs.map((p) => ({ number: p.number, base: p.base, headSha: p.headSha })),
    baseBranch: 'main',
    method: 'merge' as const,
  };
  expect(await acts.mergePullRequests(input)).toEqual({
    merged: [],
    refused: { number: 1, message: 'Required status check "build" is expected.' },
  });
  const moved = await acts.mergePullRequests({ ...input, prs: [{ ...input.prs[0]!, headSha: SHA2 }] });
  expect(moved.refused?.message).toContain(`head moved from ${SHA2.slice(0, 12)} to ${SHA1.slice(0, 12)}`);

  await status(SHA1, 'success', 'build');
  await status(SHA2, 'success', 'build');
  const before = gh.operations.length;
  expect(await acts.mergePullRequests(input)).toEqual({ merged: [1, 2], refused: null });
  expect(gh.operations.slice(before).filter((o) => o !== 'pulls/get')).toEqual([
    'pulls/merge',
    'pulls/update',
    'pulls/merge',
  ]);
  expect(gh.state.pulls.map((p) => [p.number, p.base, p.merged])).toEqual([
    [1, 'main', true],
    [2, 'main', true],
  ]);
  // Merged already: a retry merges nothing again.
  const retry = gh.operations.length;
  expect(await acts.mergePullRequests(input)).toEqual({ merged: [1, 2], refused: null });
  expect(gh.operations.slice(retry)).toEqual(['pulls/get', 'pulls/get']);
});

test('a refusal of the forge fails at once with its message; a token never reaches an error', async () => {
  const denied = createForgeActivities({ env: () => ({ [TOKEN_ENV]: 'ghp_wrong_token' }) });
  await expect(
    denied.lookAtPullRequests({ target, prs: [{ number: 1, headSha: SHA1, etag: null }] }),
  ).rejects.toMatchObject({
    type: 'ForgeUnauthorized',
    nonRetryable: true,
    message: expect.stringContaining('401 Requires authentication'),
  });
  await expect(acts.markReady({ target, numbers: [99] })).rejects.toMatchObject({
    type: 'ForgeNotFound',
    nonRetryable: true,
    message: expect.not.stringContaining(gh.state.owner.token),
  });
});

test('a look at the stack asks about each reviewer once; a closed PR is refused, not merged', async () => {
  const rita = gh.addUser('rita', 'write');
  for (const [number, sha] of [
    [1, SHA1],
    [2, SHA2],
  ] as const) {
    await as(rita.token, 'POST', `/repos/octo/widgets/pulls/${number}/comments`, {
      body: `look at #${number}`,
      commit_id: sha,
      path: 'src/greet.ts',
      line: 1,
      side: 'RIGHT',
    });
  }
  const before = gh.operations.length;
  const looks = await acts.lookAtPullRequests({
    target,
    prs: [
      { number: 1, headSha: SHA1, etag: null },
      { number: 2, headSha: SHA2, etag: null },
    ],
  });
  expect(looks.map((l) => read(l.comments).map((c) => [c.author, c.authorCanWrite]))).toEqual([
    [['rita', true]],
    [['rita', true]],
  ]);
  const asked = gh.operations.slice(before).filter((o) => o === 'repos/get-collaborator-permission-level');
  expect(asked).toHaveLength(1);

  await as(gh.state.owner.token, 'PATCH', '/repos/octo/widgets/pulls/1', { state: 'closed' });
  const result = await acts.mergePullRequests({
    target,
    prs: prs.map((p) => ({ number: p.number, base: p.base, headSha: p.headSha })),
    baseBranch: 'main',
    method: 'merge',
  });
  expect(result).toEqual({
    merged: [],
    refused: { number: 1, message: 'pull request #1 was closed without being merged' },
  });
  expect(gh.operations).not.toContain('pulls/merge');
});
