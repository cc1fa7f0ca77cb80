/**
 * A selected task's transcript tail and diff (fetched from the server, shown as text), and REPORT.md
 * when the saga is done: the one HTML the page renders, Markdown by marked, sanitized by DOMPurify.
 */
import { html } from './html.js';
import { marked } from '/vendor/marked/lib/marked.esm.js';
import DOMPurify from '/vendor/dompurify/dist/purify.es.mjs';

const NL = '\n';

/**
 * Agents wrote much of REPORT.md: it loads nothing from elsewhere. An image whose address is not relative
 * to the page (a scheme, `//host`, a backslash form) loses its address, its alt text stays: it would tell a
 * remote server the report was opened, and its query could carry what the page shows. No media, forms or
 * style attributes either (the page's Content-Security-Policy refuses them too).
 */
// eslint-disable-next-line no-control-regex
const RELATIVE = /^(?![a-z][a-z0-9+.-]*:|[\\/]{2}|\/\\)[^\s\x00-\x1f\x7f]*$/i;
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.nodeName !== 'IMG' || RELATIVE.test(node.getAttribute('src') ?? '')) return;
  node.removeAttribute('src');
  node.setAttribute('data-remote-image', 'dropped');
});
const PURIFY = {
  FORBID_TAGS: [
    'audio',
    'video',
    'source',
    'track',
    'picture',
    'form',
    'input',
    'style',
    'link',
    'meta',
    'base',
  ],
  FORBID_ATTR: ['srcset', 'poster', 'background', 'style', 'action', 'formaction', 'ping'],
};

/** REPORT.md as sanitized HTML, remote images dropped. */
export function reportHtml(markdown) {
  return DOMPurify.sanitize(marked.parse(markdown), PURIFY);
}

function diffLineClass(line) {
  if (line.startsWith('+') && !line.startsWith('+++')) return 'add';
  if (line.startsWith('-') && !line.startsWith('---')) return 'del';
  if (line.startsWith('@@')) return 'hunk';
  return '';
}

export function TaskDetail({ task, detail, onClose }) {
  if (!task) return '';
  const link = detail.links?.tasks?.[task.ref];
  const lines = task.lines;
  return html`<aside class="task-detail" data-detail=${task.ref}>
    <header>
      <h2>Task ${task.ref}</h2>
      ${link && html`<a href=${link} target="_blank" rel="noopener noreferrer">workflow ↗</a>`}
      <button type="button" class="close" onClick=${() => onClose(task.ref)}>close</button>
    </header>
    <h3>Transcript (tail)</h3>
    ${
      task.transcriptError
        ? html`<p class="card-error">${task.transcriptError}</p>`
        : html`<pre class="transcript">
${lines === null ? 'Loading…' : lines.length ? lines.join('\n') : '(no output yet)'}</pre>`
    }
    <h3>Diff against the base</h3>
    ${
      task.diffError
        ? html`<p class="card-error">${task.diffError}</p>`
        : task.diff === null
          ? html`<pre class="diff">Loading…</pre>`
          : html`<pre class="diff">
${(task.diff || '(no changes)')
                .split('\n')
                .map(
                  (line, i) => html`<span key=${i} class=${diffLineClass(line)}>${line + NL}</span>`,
                )}</pre>`
    }
  </aside>`;
}

export function Report({ report }) {
  if (!report) return '';
  if (report.loading) return html`<section class="report"><p class="muted">Loading REPORT.md…</p></section>`;
  if (report.error) return html`<section class="report"><p class="card-error">${report.error}</p></section>`;
  if (!report.markdown) return '';
  const safe = reportHtml(report.markdown);
  return html`<section class="report">
    <h2>REPORT.md</h2>
    <div class="markdown" dangerouslySetInnerHTML=${{ __html: safe }}></div>
  </section>`;
}
