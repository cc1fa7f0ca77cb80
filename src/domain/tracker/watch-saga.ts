/**
 * The input of a saga `saga watch` starts for a labelled issue (docs/PROCEDURE.md §14). Pure, so the watch
 * workflow builds it: the name comes from the issue's reference (one issue, one saga), the goal is the
 * issue's title, the flags are the watch's, and the label is the name's confirmation.
 */
import type { FlagsResult } from '../contract/flags-result';
import { parseFlags, type ConfigDefaults } from '../request/flags';
import type { IntakeSource } from './issue';
import type { TrackerWatchInput } from './issue-sync';
import { issueSagaName, trackerRefText } from './tracker-ref';
import { phaseLabel, TRACKER_PHASES } from './workpad';

/**
 * The watch's flags with the issue's title as the goal. The title is never parsed: a title starting with
 * `--` would otherwise become a flag (or an unknown-flag error) the issue's author chose. Text after the
 * watch's flags is refused, as the goal is the issue's.
 */
export function watchFlags(argumentsText: string, defaults: ConfigDefaults, goal: string): FlagsResult {
  const parsed = parseFlags(argumentsText, defaults);
  if (parsed.error) throw new Error(`saga watch arguments: ${parsed.error}`);
  if (parsed.goal)
    throw new Error(
      `saga watch arguments: '${parsed.goal}' is not a flag; the goal of each saga is its issue's title`,
    );
  return { ...parsed, goal };
}

/**
 * The SagaInput for the issue `source` found by `watch` (throws when the watch's flags do not parse). Its
 * type is SagaInput's shape, not its name: SagaInput lives on the saga floor, above this one (the unit test
 * holds the two together).
 */
export function issueSagaInput(watch: TrackerWatchInput, source: IntakeSource, nowIso: string) {
  const { template } = watch;
  const name = issueSagaName(source.ref);
  const goal = source.title || `Issue ${trackerRefText(source.ref)}`;
  const flags = watchFlags(watch.argumentsText, template.flagDefaults ?? {}, goal);
  return {
    name,
    repo: template.repo,
    base: template.base,
    goal,
    arguments: watch.argumentsText,
    flags,
    plan: null,
    planSource: null,
    agent: template.agent,
    configFile: template.configFile,
    ...(template.trustRepoConfig ? { trustRepoConfig: true } : {}),
    ...(template.deliver ? { deliver: true } : {}),
    source,
    confirmedBy: `saga watch (label ${watch.label})`,
    ...(template.unconfined.length ? { unconfined: template.unconfined } : {}),
    sagaHome: template.sagaHome,
    // POSIX, as the client's path.join gives it on the hosts sagas run on (workflow code has no `path`).
    sagaDir: `${template.sagaHome.replace(/\/+$/, '')}/${name}`,
    worktreeRoot: template.worktreeRoot,
    hostId: template.hostId,
    hostQueue: template.hostQueue,
    uiBaseUrl: null,
    startedAt: nowIso,
  };
}

/**
 * The `saga:<phase>` label an issue carries when a saga handled it before, else null. The watch keeps an
 * issue to one saga by its workflow id, which the server forgets past retention: an issue still labelled
 * for the watch but marked by an earlier saga's phase is not started again.
 */
export function handledBeforeLabel(labels: readonly string[]): string | null {
  const phases: readonly string[] = TRACKER_PHASES.map(phaseLabel);
  return labels.find((label) => phases.includes(label)) ?? null;
}
