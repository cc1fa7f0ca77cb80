/**
 * The options the saga offers at its fixed checkpoints, spelled once for whoever answers them by name: the
 * CLI's shortcuts (`saga approve`, `saga accept --fast-forward`, `saga report`...), the chat slash command
 * and the demo's scripted user. A shortcut answering with text the workflow does not offer is refused by
 * the respond validator, so these must stay the workflow's own option texts.
 */
export const CONFIRM_NAME_CHOICE = { confirm: 'confirm', cancel: 'cancel' } as const;

export const PLAN_APPROVAL_CHOICE = { approve: 'approve', revise: 'revise', reject: 'reject' } as const;

export const ACCEPTANCE_CHOICE = {
  accept: 'accept',
  acceptAndFastForward: 'accept and fast-forward',
  reportIssues: 'report issues',
  /** `delivery: pr`: the saga's draft PRs marked ready for review (acceptance is asked again). */
  markReady: 'mark ready',
  /** `delivery: pr`: the PRs merged in order through the forge's merge API. */
  merge: 'merge',
} as const;

/** The acceptance choice of `accept` with or without `--fast-forward`. */
export const acceptChoice = (fastForward: boolean): string =>
  fastForward ? ACCEPTANCE_CHOICE.acceptAndFastForward : ACCEPTANCE_CHOICE.accept;
