/**
 * The part of Linear's filter language the stand-in answers: string and id comparators, and the issue,
 * team, label and workflow-state filters the adapter sends. A filter key the stand-in does not implement is
 * a violation (its answer would otherwise be silently wrong), never ignored.
 */
import type { IssueRecord, LabelRecord, LinearWorkspace, TeamRecord } from './records';

type Filter = Record<string, unknown>;

export class FilterGaps {
  readonly missing: string[] = [];
  gap(where: string, key: string): false {
    const message = `filter ${where}.${key} is not implemented by the Linear stand-in`;
    if (!this.missing.includes(message)) this.missing.push(message);
    return false;
  }
}

/** StringComparator / IDComparator over one value. */
export function matchString(gaps: FilterGaps, where: string, c: Filter, value: string | null): boolean {
  return Object.entries(c).every(([op, arg]) => {
    const v = value ?? '';
    const a = typeof arg === 'string' ? arg : '';
    const list = Array.isArray(arg) ? (arg as string[]) : [];
    switch (op) {
      case 'eq':
        return value === arg;
      case 'neq':
        return value !== arg;
      case 'eqIgnoreCase':
        return v.toLowerCase() === a.toLowerCase();
      case 'neqIgnoreCase':
        return v.toLowerCase() !== a.toLowerCase();
      case 'in':
        return list.includes(v);
      case 'nin':
        return !list.includes(v);
      case 'startsWith':
        return v.startsWith(a);
      case 'contains':
        return v.includes(a);
      case 'containsIgnoreCase':
        return v.toLowerCase().includes(a.toLowerCase());
      default:
        return gaps.gap(where, op);
    }
  });
}

function matchTeam(gaps: FilterGaps, where: string, f: Filter, team: TeamRecord | null): boolean {
  return Object.entries(f).every(([key, sub]) => {
    if (key === 'null') return (team === null) === sub;
    if (!team) return false;
    if (key === 'id' || key === 'key' || key === 'name')
      return matchString(gaps, `${where}.${key}`, sub as Filter, team[key]);
    return gaps.gap(where, key);
  });
}

export function matchLabel(gaps: FilterGaps, w: LinearWorkspace, f: Filter, label: LabelRecord): boolean {
  return Object.entries(f).every(([key, sub]) => {
    if (key === 'id' || key === 'name') return matchString(gaps, `label.${key}`, sub as Filter, label[key]);
    if (key === 'team') {
      const team = w.teams.find((t) => t.id === label.teamId) ?? null;
      return matchTeam(gaps, 'label.team', sub as Filter, team);
    }
    return gaps.gap('label', key);
  });
}

/** IssueLabelCollectionFilter: `some`, `every`, or label fields meaning "some label". */
function matchLabels(gaps: FilterGaps, w: LinearWorkspace, f: Filter, issue: IssueRecord): boolean {
  const labels = w.labels.filter((l) => issue.labelIds.includes(l.id));
  return Object.entries(f).every(([key, sub]) => {
    if (key === 'some') return labels.some((l) => matchLabel(gaps, w, sub as Filter, l));
    if (key === 'every') return labels.every((l) => matchLabel(gaps, w, sub as Filter, l));
    if (key === 'name' || key === 'id') return labels.some((l) => matchLabel(gaps, w, { [key]: sub }, l));
    return gaps.gap('issue.labels', key);
  });
}

export function matchIssue(gaps: FilterGaps, w: LinearWorkspace, f: Filter, issue: IssueRecord): boolean {
  return Object.entries(f).every(([key, sub]) => {
    switch (key) {
      case 'and':
        return (sub as Filter[]).every((s) => matchIssue(gaps, w, s, issue));
      case 'or':
        return (sub as Filter[]).some((s) => matchIssue(gaps, w, s, issue));
      case 'team':
        return matchTeam(
          gaps,
          'issue.team',
          sub as Filter,
          w.teams.find((t) => t.id === issue.teamId) ?? null,
        );
      case 'labels':
        return matchLabels(gaps, w, sub as Filter, issue);
      case 'state': {
        const state = w.states.find((s) => s.id === issue.stateId);
        return Object.entries(sub as Filter).every(([k, c]) =>
          k === 'type' || k === 'name' || k === 'id'
            ? matchString(gaps, `issue.state.${k}`, c as Filter, state ? state[k] : null)
            : gaps.gap('issue.state', k),
        );
      }
      case 'number':
        return Object.entries(sub as Filter).every(([op, n]) =>
          op === 'eq' ? issue.number === n : gaps.gap('issue.number', op),
        );
      default:
        return gaps.gap('issue', key);
    }
  });
}
