/** `/saga status NAME` as Slack mrkdwn: phase, what the saga waits for (with how to answer), and the Web UI link. */
import type { SagaStatus } from '../domain/contract/state';
import { slackEscape } from './messages';

export function formatStatus(status: SagaStatus): string {
  const lines = [`Saga *${status.name}*: phase *${status.phase}*, round ${status.round}.`];
  if (status.pending.length === 0) lines.push('It waits for nobody.');
  for (const p of status.pending) {
    const options = p.options
      .map((o, i) => `${i + 1}) ${slackEscape(o)}${i === p.recommended ? ' (recommended)' : ''}`)
      .join(', ');
    lines.push(
      `• \`${p.id}\` (${p.kind}): ${slackEscape(p.prompt.split('\n')[0]!)}`,
      `   options: ${options}`,
    );
    lines.push(`   answer: \`/saga respond ${status.name} ${p.id} CHOICE\``);
  }
  if (status.uiUrl) lines.push(`Web UI: ${status.uiUrl}`);
  return lines.join('\n');
}
