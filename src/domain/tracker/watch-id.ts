/**
 * The workflow id of `saga watch --from SCOPE --label LABEL`: one watch per tracker scope and label, so a
 * second `saga watch` of the same finds the first running, and `--stop`/`--status` find it again.
 */
import { slugify } from '../contract/naming';
import { trackerScopeText, type TrackerScope } from './tracker-ref';

/** Labels `saga watch` refuses: the saga's own phase labels would start a saga per saga. */
export const PHASE_LABEL_PREFIX = 'saga:';
const MAX_LABEL = 50;

/** FNV-1a, by hand (no crypto in the domain). */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (const ch of text) {
    hash ^= ch.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0').slice(0, 6);
}

/**
 * `saga-watch-gitea-alice-demo-saga-<hash>`: the slug to read, a short hash of the exact scope and label to
 * tell apart those whose slugs meet (`to do`, `to-do`; repo `a-b` label `c`, repo `a` label `b-c`).
 */
export function watchWorkflowId(scope: TrackerScope, label: string): string {
  const text = `${trackerScopeText(scope)} ${label}`;
  return `saga-watch-${slugify(text, 60)}-${shortHash(text)}`;
}

/** Why `label` cannot be watched, or null: one line of printable text, not a phase label. */
export function watchLabelProblem(label: string): string | null {
  if (!label.trim()) return 'is empty';
  if (label.length > MAX_LABEL) return `is longer than ${MAX_LABEL} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(label)) return 'holds control characters';
  if (label.toLowerCase().startsWith(PHASE_LABEL_PREFIX))
    return `is one of the saga's own phase labels (${PHASE_LABEL_PREFIX}<phase>), which it sets on the issues it works on`;
  return null;
}
