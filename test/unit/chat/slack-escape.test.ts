/** Slack messages built from agent and user text: only the saga's own mentions and links stay markup. */
import {
  answeredMessage,
  failureMessage,
  noticeMessage,
  notificationMessage,
  slackEscape,
} from '../../../src/chat/messages';

const EVIL = '<!channel> & <http://evil.example|docs>';
const SAFE = '&lt;!channel&gt; &amp; &lt;http://evil.example|docs&gt;';

describe('Slack text', () => {
  test('slackEscape escapes &, < and > (and & first, so nothing is escaped twice)', () => {
    expect(slackEscape(EVIL)).toBe(SAFE);
    expect(slackEscape('a &lt; b')).toBe('a &amp;lt; b');
  });

  test('every message escapes the prompt, the answer and its note; the answerer stays a mention', () => {
    const interaction = { id: 'q1', kind: 'question', prompt: EVIL, options: ['x'], recommended: 0 };
    const notified = notificationMessage({ saga: 's', interaction, uiUrl: 'http://ui/x', reminder: 0 });
    expect(notified.text).toContain(SAFE);
    const answered = answeredMessage({
      saga: 's',
      interaction,
      answer: { user: 'slack:U123', choice: '<!here>', text: EVIL },
      uiUrl: 'http://ui/x',
    });
    expect(answered.text).toContain(`<@U123> answered *&lt;!here&gt;*: ${SAFE}`);
    expect(JSON.stringify(answered.blocks)).toContain('<http://ui/x|Open in Temporal UI>');
    expect(failureMessage(EVIL, '').text).toBe(`:x: ${SAFE}`);
    expect(noticeMessage(EVIL).text).toBe(`:warning: ${SAFE}`);
  });

  test('a long text is cut without splitting an entity', () => {
    const text = notificationMessage({
      saga: 's',
      interaction: {
        id: 'q',
        kind: 'question',
        prompt: `${'x'.repeat(2950)}${'<'.repeat(100)}`,
        options: [],
        recommended: null,
      },
      uiUrl: '',
      reminder: 0,
    }).text;
    expect(text.length).toBeLessThanOrEqual(3000);
    expect(text).toMatch(/(&lt;)+…$/);
  });
});
