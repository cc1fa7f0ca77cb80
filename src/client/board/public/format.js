/** Small formatters shared by the views (numbers and times only; text stays text). */

export function usd(value) {
  if (value === null || value === undefined) return '—';
  return `$${Number(value).toFixed(value >= 100 ? 0 : 2)}`;
}

export function tokens(n) {
  if (!n) return '0';
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** "3m 12s" for a duration in milliseconds; '' when it is not a non-negative number. */
export function duration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** "3m 12s" between two ISO times (the second defaults to now); '' when the start is unknown. */
export function elapsed(from, to) {
  if (!from) return '';
  return duration((to ? Date.parse(to) : Date.now()) - Date.parse(from));
}

export function percent(part, whole) {
  return whole > 0 ? Math.round((100 * part) / whole) : 0;
}

/** Tasks integrated / total of a SagaStatus. */
export function progressOf(status) {
  const tasks = status.milestones.flatMap((m) => m.tasks);
  return { integrated: tasks.filter((t) => t.status === 'integrated').length, total: tasks.length };
}

/** "12.0k↓ 3.4k↑ $0.42" (a trailing ~ when the cost was estimated from the price table). */
export function usageLine(usage) {
  const cost = `${usd(usage.costUsd)}${usage.costEstimated ? '~' : ''}`;
  return `${tokens(usage.inputTokens)}↓ ${tokens(usage.outputTokens)}↑ ${cost}`;
}
