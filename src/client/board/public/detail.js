/**
 * A selected task's transcript tail and diff (fetched from the server, shown as text), and REPORT.md
 * when the saga is done: the one HTML the page renders (markdown.js, loaded when first needed).
 */
import { Component, html } from './html.js';

const NL = '\n';

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

/** REPORT.md: markdown.js (marked and DOMPurify, ~100 KB) is loaded when the first report is shown. */
export class Report extends Component {
  componentDidMount() {
    this.load();
  }

  componentDidUpdate() {
    this.load();
  }

  load() {
    if (!this.props.report?.markdown || this.state.reportHtml || this.loading) return;
    this.loading = import('./markdown.js').then(
      ({ reportHtml }) => this.setState({ reportHtml }),
      (err) => this.setState({ failed: err.message }),
    );
  }

  render({ report }, { reportHtml, failed }) {
    if (!report) return '';
    if (report.loading)
      return html`<section class="report"><p class="muted">Loading REPORT.md…</p></section>`;
    const error = report.error || failed;
    if (error) return html`<section class="report"><p class="card-error">${error}</p></section>`;
    if (!report.markdown) return '';
    if (!reportHtml) return html`<section class="report"><p class="muted">Loading REPORT.md…</p></section>`;
    return html`<section class="report">
      <h2>REPORT.md</h2>
      <div class="markdown" dangerouslySetInnerHTML=${{ __html: reportHtml(report.markdown) }}></div>
    </section>`;
  }
}
