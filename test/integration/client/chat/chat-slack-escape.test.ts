/**
 * Agent text in Slack is text: a planner question carrying `<!channel>`, a disguised link and a user
 * mention reaches Slack's Web API (a local stand-in) with `&`, `<` and `>` escaped, in the message the
 * worker posts (without link or media previews) and in the bridge's `/saga status` reply (its options).
 * Real Temporal server, real worker, the demo agent as the planner.
 */
import path from 'node:path';
import { loadBridgeConfig } from '../../../../src/chat/config';
import { sign } from '../../../../src/chat/signing';
import { startChatBridge, type ChatBridge } from '../../../../src/client/chat/server';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { respond } from '../../../../src/client/saga-client';
import { createSampleRepo, greetingPlan } from '../../../../src/demo/sample-repo';
import { cancelSagaQuietly } from '../../../harness/greeting-saga';
import { startHttpRecorder, type HttpRecorder, type RecordedRequest } from '../../../harness/http-recorder';
import { saveEnv } from '../../../harness/process-env';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../../harness/saga-env';

const SIGNING_SECRET = 'slack-escape-signing-secret';
const BOT_TOKEN = 'xoxb-escape-token';
const APPROVER = 'UAPPROVER';
const INJECTED = 'Ping <!channel> & <@U0BOSS>: see <http://evil.example|the docs>';
const ESCAPED = 'Ping &lt;!channel&gt; &amp; &lt;@U0BOSS&gt;: see &lt;http://evil.example|the docs&gt;';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const callBody = (r: RecordedRequest): Json => {
  if (String(r.headers['content-type']).includes('json')) return JSON.parse(r.rawBody) as Json;
  const form: Json = Object.fromEntries(new URLSearchParams(r.rawBody));
  if (typeof form.blocks === 'string') form.blocks = JSON.parse(form.blocks);
  return form;
};
const method = (r: RecordedRequest) => r.path.replace(/^\/api\//, '');

describe('agent text in Slack', () => {
  let env: SagaTestEnv;
  let slackApi: HttpRecorder;
  let bridge: ChatBridge;
  let restoreEnv: () => void = () => undefined;
  const name = 'slackescape';
  let ts = 1;

  beforeAll(async () => {
    env = await createSagaTestEnv('slackescape');
    slackApi = await startHttpRecorder(() => ({ ok: true, channel: 'C0SAGA', ts: `1700000000.00${ts++}` }));
    restoreEnv = saveEnv(['SLACK_BOT_TOKEN', 'SLACK_CHANNEL', 'SLACK_API_URL', 'SAGA_REMIND_AFTER_MS']);
    Object.assign(process.env, {
      SAGA_HOME: env.sagaHome,
      SAGA_HOST_ID: env.hostId,
      SAGA_TASK_QUEUE: env.taskQueue,
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_CHANNEL: 'C0SAGA',
      SLACK_API_URL: `${slackApi.url}/api/`,
    });
    delete process.env.SAGA_REMIND_AFTER_MS;
    await env.startWorkers();
    bridge = await startChatBridge({
      client: env.client,
      host: '127.0.0.1',
      config: loadBridgeConfig({
        SAGA_APPROVERS: APPROVER,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_API_URL: `${slackApi.url}/api/`,
        SAGA_CHAT_PORT: '0',
      }),
    });
  });

  afterAll(async () => {
    await cancelSagaQuietly(env, name);
    await bridge?.close();
    await slackApi?.close();
    await env?.close();
    restoreEnv();
  });

  test('a planner question’s mentions and links reach Slack escaped, with no previews', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      script: {
        planner: {
          problem: 'The sample library cannot greet anyone yet.',
          questions: [[{ id: 'style', text: INJECTED, options: ['<!here>', 'plain'], recommended: 0 }]],
          plan: greetingPlan(),
        },
      },
    });
    const input = await prepareSaga({ repo, argumentsText: 'Add a greeting', name });
    await startSaga(env.client, input);
    await waitForPending(env, name, 'confirm-name');
    await respond(env.client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
    const asked = await waitForPending(env, name, 'q1-style', 60_000);
    const question = asked.pending.find((p) => p.prompt.includes('Ping'))!;

    const posted = callBody(
      await slackApi.waitFor(
        (r) => method(r) === 'chat.postMessage' && String(callBody(r).text).includes(`\`${question.id}\``),
      ),
    );
    expect(posted.text).toContain(ESCAPED);
    expect(posted.blocks[0].text.text).toContain(ESCAPED);
    expect(JSON.stringify(posted)).not.toMatch(/<!channel>|<@U0BOSS>|<http:\/\/evil/);
    expect([String(posted.unfurl_links), String(posted.unfurl_media)]).toEqual(['false', 'false']);

    const body = new URLSearchParams({
      team_id: 'T0TEAM',
      channel_id: 'C0SAGA',
      user_id: APPROVER,
      command: '/saga',
      text: `status ${name}`,
      response_url: `${slackApi.url}/response`,
      trigger_id: '1.2.3',
    }).toString();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(`${bridge.url}/slack/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'X-Slack-Request-Timestamp': timestamp,
        'X-Slack-Signature': sign('v0', SIGNING_SECRET, timestamp, body),
      },
      body,
    });
    const reply = ((await res.json()) as Json).text as string;
    // Status shows a prompt's first line (here the planner's restatement) and the options, agent-written too.
    expect(reply).toContain('1) &lt;!here&gt; (recommended)');
    expect(reply).not.toMatch(/<!channel>|<!here>|<@U0BOSS>/);
  }, 120_000);
});
