/**
 * What the saga waits for, as cards: the prompt (text), the options as buttons with the recommended one
 * marked, a free-text field when an option takes text, and the server's refusal text when it says no.
 */
import { html } from './html.js';
import { elapsed } from './format.js';

function OptionButton({ interaction, option, index, busy, onAnswer }) {
  const recommended = interaction.recommended === index;
  const needsText = (interaction.textRequiredFor || []).includes(option);
  return html`<button
    type="button"
    class=${`option ${recommended ? 'recommended' : ''}`}
    data-choice=${option}
    data-recommended=${recommended ? 'true' : undefined}
    disabled=${busy}
    title=${needsText ? 'Needs the text below' : ''}
    onClick=${() => onAnswer(interaction, option)}
  >
    ${option}${recommended ? html`<span class="rec-mark"> ★ recommended</span>` : ''}${needsText ? ' ✎' : ''}
  </button>`;
}

/**
 * The budget question's amount: the new total in USD or a raise (`+5`), sent as the `raise` answer's text
 * exactly as `saga respond NAME ID raise --text 20`; Enter raises. The saga's own validator judges it.
 */
function BudgetAmount({ interaction, actions }) {
  const onKey = (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    actions.answer(interaction, 'raise');
  };
  return html`<label class="budget-amount-label"
    >New budget (USD, or +N to add)
    <input
      class="answer-text budget-amount"
      type="text"
      inputmode="decimal"
      placeholder="e.g. 20 or +5"
      onInput=${(e) => actions.setText(interaction.id, e.target.value)}
      onKeyDown=${onKey}
  /></label>`;
}

function InteractionCard({ interaction, local, actions }) {
  const takesText = (interaction.textRequiredFor || []).length > 0;
  return html`<article
    class=${`interaction kind-${interaction.kind}`}
    data-interaction=${interaction.id}
    tabindex="-1"
  >
    <header>
      <span class="badge kind">${interaction.kind}</span>
      <span class="muted">${interaction.id} · open ${elapsed(interaction.openedAt)}</span>
    </header>
    <p class="prompt">${interaction.prompt}</p>
    ${
      interaction.textFormat === 'budget-amount' &&
      html`<${BudgetAmount} interaction=${interaction} actions=${actions} />`
    }
    ${
      takesText &&
      interaction.textFormat !== 'budget-amount' &&
      html`<textarea
        class="answer-text"
        rows="3"
        placeholder=${`Text for ${interaction.textRequiredFor.join(', ')}${interaction.textFormat ? ` (${interaction.textFormat})` : ''}`}
        onInput=${(e) => actions.setText(interaction.id, e.target.value)}
      ></textarea>`
    }
    <div class="options">
      ${interaction.options.map(
        (option, index) =>
          html`<${OptionButton}
            key=${option}
            interaction=${interaction}
            option=${option}
            index=${index}
            busy=${local.busy}
            onAnswer=${actions.answer}
          />`,
      )}
    </div>
    ${local.error && html`<p class="card-error" role="alert">${local.error}</p>`}
    ${local.answered && !local.error && html`<p class="card-ok">Answered '${local.answered}': waiting for the saga…</p>`}
  </article>`;
}

export function PendingCards({ pending, cards, actions }) {
  if (!pending.length) return '';
  return html`<section class="pending">
    <h2>Waiting for you</h2>
    ${pending.map(
      (interaction) =>
        html`<${InteractionCard}
          key=${interaction.id}
          interaction=${interaction}
          local=${cards[interaction.id] || {}}
          actions=${actions}
        />`,
    )}
  </section>`;
}
