/** Pull requests as `status.pullRequests` holds them, for the renderer and board tests. */
import type { PullRequestStatus } from '../../src/domain/contract/state';

export const XSS_TEXT = '<img src=x onerror=alert(1)>';

/** A stacked pair: m1 ready with CI failing and fixes run and two comments listed; m2 a draft, CI pending. */
export function pullRequestPair(): PullRequestStatus[] {
  return [
    {
      milestone: 1,
      number: 12,
      url: 'https://forge.example/alice/demo/pulls/12',
      head: 'saga/demo/deliver-m1',
      base: 'main',
      headSha: 'a'.repeat(40),
      draft: false,
      state: 'open',
      ci: 'failure',
      failing: ['lint', 'test (node 22)'],
      ciFixes: 1,
      reviewFixes: 2,
      listedComments: [
        { id: 7, author: 'carol', place: 'src/a.ts:3', why: 'no write access' },
        { id: 8, author: 'ci-bot', place: `README.md:1 ${XSS_TEXT}`, why: 'a bot' },
      ],
    },
    {
      milestone: 2,
      number: 13,
      url: 'https://forge.example/alice/demo/pulls/13',
      head: 'saga/demo/deliver-m2',
      base: 'saga/demo/deliver-m1',
      headSha: 'b'.repeat(40),
      draft: true,
      state: 'open',
      ci: 'pending',
      failing: [],
      ciFixes: 0,
      reviewFixes: 0,
      listedComments: [],
    },
  ];
}
