/**
 * Steering one saga from its page: Cancel, as `saga cancel` (agents stopped, work committed, worktrees
 * removed), behind a confirm step on the page itself (a browser dialog can be suppressed, and a click on the
 * wrong button must not cancel a saga).
 */
import { Component, html } from './html.js';
import { cancelSaga } from './api.js';

export class CancelSaga extends Component {
  constructor(props) {
    super(props);
    this.state = { asking: false, busy: false, error: null, done: false };
  }

  async cancel() {
    this.setState({ busy: true, error: null });
    const reply = await cancelSaga(this.props.name);
    this.setState(
      reply.ok ? { busy: false, asking: false, done: true } : { busy: false, error: reply.error },
    );
  }

  render({ running }, s) {
    if (!running) return '';
    if (s.done)
      return html`<p class="form-ok cancel-requested">Cancellation requested: the saga is stopping…</p>`;
    return html`<div class="cancel-saga">
      ${
        !s.asking &&
        html`<button
          type="button"
          class="danger cancel-open"
          onClick=${() => this.setState({ asking: true })}
        >
          Cancel saga
        </button>`
      }
      ${
        s.asking &&
        html`<span class="cancel-confirm" role="group" aria-label="Confirm cancel">
          Stop its agents, commit their work and remove its worktrees?
          <button type="button" class="danger cancel-yes" disabled=${s.busy} onClick=${() => this.cancel()}>
            Yes, cancel it
          </button>
          <button
            type="button"
            class="secondary cancel-no"
            onClick=${() => this.setState({ asking: false, error: null })}
          >
            No
          </button>
        </span>`
      }
      ${s.error && html`<p class="form-error" role="alert">${s.error}</p>`}
    </div>`;
  }
}
