/**
 * The new-saga form on `#/` (README "The saga board"): a repository the board knows, the goal, the flags
 * (the server's own vocabulary), the agent profile and the budget. "Check" runs every `saga start` check and
 * proposes the name; "Start" starts the saga under the name shown: that click is the user's confirmation of
 * the name, recorded as board:USER. Errors are the server's own texts, shown as text.
 */
import { Component, html } from './html.js';
import { fetchStartOptions, startSaga } from './api.js';

/** The flags text `saga start` takes, from the form's per-flag choices (default / on / off). */
export function flagsText(choices, lanes, valueFlag) {
  const words = [];
  for (const [flag, choice] of Object.entries(choices)) {
    if (choice === 'on') words.push(flag === valueFlag && lanes ? `${flag}=${lanes}` : flag);
    else if (choice === 'off') words.push(`--no-${flag.slice(2)}`);
  }
  return words.join(' ');
}

export class NewSagaForm extends Component {
  constructor(props) {
    super(props);
    this.state = { open: false, options: null, error: null, busy: false, proposed: null, started: null };
    this.fields = { goal: '', name: '', budget: '', lanes: '', agent: '', flags: {}, allowDirty: false };
  }

  async open() {
    this.setState({ open: true, error: null, started: null });
    try {
      const options = await fetchStartOptions();
      this.setState({ options, repo: options.repos[0]?.path ?? '' });
    } catch (err) {
      this.setState({ error: err.message });
    }
  }

  /** Any change after a check asks for a new check: the proposed name was for what was checked. */
  edit(field, value) {
    if (field.startsWith('flag:')) this.fields.flags[field.slice(5)] = value;
    else this.fields[field] = value;
    if (this.state.proposed && field !== 'name') this.setState({ proposed: null });
  }

  request(confirm) {
    const f = this.fields;
    const { options, repo } = this.state;
    const budget = f.budget.trim();
    return {
      repo,
      goal: f.goal,
      flags: flagsText(f.flags, f.lanes.trim(), options.valueFlag),
      ...(f.agent ? { agent: f.agent } : {}),
      ...(budget ? { budgetUsd: Number(budget) } : {}),
      ...(f.name.trim() ? { name: f.name.trim() } : {}),
      ...(f.allowDirty ? { allowDirty: true } : {}),
      confirm,
    };
  }

  async submit(event) {
    event.preventDefault();
    const confirm = this.state.proposed !== null;
    const budget = this.fields.budget.trim();
    if (budget && !(Number(budget) > 0))
      return this.setState({ error: `budget: '${budget}' is not an amount in USD above 0.` });
    this.setState({ busy: true, error: null });
    const reply = await startSaga(this.request(confirm));
    if (!reply.ok) return this.setState({ busy: false, error: reply.error });
    if (!confirm) {
      this.fields.name = reply.name;
      return this.setState({ busy: false, proposed: reply.name, warnings: reply.warnings });
    }
    this.fields = { goal: '', name: '', budget: '', lanes: '', agent: '', flags: {}, allowDirty: false };
    this.setState({ busy: false, open: false, proposed: null, started: reply.name, warnings: [] });
  }

  render(_props, s) {
    if (!s.open)
      return html`<div class="new-saga-bar">
        <button type="button" class="new-saga-open" onClick=${() => this.open()}>New saga</button>
        ${
          s.started &&
          html`<span class="form-ok" role="status"
            >Started <a href=${`#/saga/${encodeURIComponent(s.started)}`}>${s.started}</a></span
          >`
        }
      </div>`;
    if (!s.options)
      return html`<p class=${s.error ? 'form-error' : 'muted'} role=${s.error ? 'alert' : undefined}>
        ${s.error ?? 'Loading the repositories…'}
      </p>`;
    return html`<form class="new-saga" onSubmit=${(e) => this.submit(e)}>
      <h2>New saga</h2>
      ${this.renderFields(s)}
      ${
        s.warnings?.length > 0 &&
        html`<ul class="form-warnings">
          ${s.warnings.map((w) => html`<li>${w}</li>`)}
        </ul>`
      }
      ${s.error && html`<p class="form-error" role="alert">${s.error}</p>`}
      <div class="form-buttons">
        <button type="submit" class=${s.proposed ? 'start' : 'check'} disabled=${s.busy}>
          ${s.proposed ? `Start saga '${s.proposed}'` : 'Check'}
        </button>
        <button type="button" class="secondary" onClick=${() => this.setState({ open: false })}>Close</button>
      </div>
    </form>`;
  }

  renderFields(s) {
    const { options, repo } = s;
    const chosen = options.repos.find((r) => r.path === repo);
    const edit = (field) => (e) => this.edit(field, e.target.value);
    return html`<label
        >Repository
        <select
          name="repo"
          value=${repo}
          onChange=${(e) => this.setState({ repo: e.target.value, proposed: null })}
        >
          ${options.repos.map((r) => html`<option key=${r.path} value=${r.path}>${r.path}</option>`)}
        </select>
      </label>
      ${options.repos.length === 0 && html`<p class="muted">No repository: run saga board --repo PATH.</p>`}
      ${chosen?.error && html`<p class="form-error">${chosen.error}</p>`}
      <label class="check-choice"
        ><input
          name="allowDirty"
          type="checkbox"
          onChange=${(e) => this.edit('allowDirty', e.target.checked)}
        />
        ${options.allowDirtyLabel} (task branches will not hold them)</label
      >
      <label>Goal <textarea name="goal" rows="3" onInput=${edit('goal')}></textarea></label>
      <fieldset class="flags-choice">
        <legend>Flags</legend>
        ${options.flags.map(
          ({ flag }) =>
            html`<label key=${flag} class="flag-choice"
              >${flag}
              <select name=${`flag${flag.slice(1)}`} onChange=${edit(`flag:${flag}`)}>
                <option value="">default</option>
                <option value="on">on</option>
                <option value="off">off</option>
              </select>
            </label>`,
        )}
        <label class="flag-choice"
          >lanes
          <input
            name="lanes"
            type="number"
            min="1"
            max=${options.maxLanes}
            placeholder=${options.defaultLanes}
            onInput=${edit('lanes')}
          />
        </label>
      </fieldset>
      <label
        >Agent profile
        <select name="agent" onChange=${edit('agent')}>
          <option value="">default${chosen?.defaultAgent ? ` (${chosen.defaultAgent})` : ''}</option>
          ${(chosen?.agents ?? []).map((a) => html`<option key=${a} value=${a}>${a}</option>`)}
        </select>
      </label>
      <label
        >Budget (USD)
        <input
          name="budget"
          type="text"
          inputmode="decimal"
          placeholder=${chosen?.budgetUsd ? `config: ${chosen.budgetUsd}` : 'none'}
          onInput=${edit('budget')}
        />
      </label>
      <label
        >Name
        <input
          name="name"
          type="text"
          value=${this.fields.name}
          placeholder="proposed by Check"
          onInput=${edit('name')}
        />
      </label>`;
  }
}
