/**
 * The modules every workflow shares, loaded once per worker (the bundler's `preloadModules`) instead of once
 * per workflow: evaluating the domain modules' zod schemas was about 6 ms of CPU, most of a task workflow's
 * first activation and a third of replaying a saga. The SDK deep-freezes what is preloaded, so nothing here
 * may hold state a workflow changes, and workflow code must not make zod schemas at run time (a schema's
 * constructor writes to itself). Zod writes to a schema when it parses in two ways: it fills a cache on the
 * first parse (filled here, before the freeze, by parsing once) and resets a regex check's lastIndex.
 *
 * test/unit/workflows/workflow-preload.test.ts checks this list against the domain modules the workflows import.
 */
import { ZodEnum, ZodNativeEnum, ZodObject, ZodString, ZodType } from 'zod';
import * as acceptanceIssues from '../domain/planning/acceptance-issues';
import * as adjustmentApproval from '../domain/fleet/adjustment-approval';
import * as answerChoices from '../domain/contract/answer-choices';
import * as autoPickNotice from '../domain/planning/auto-pick-notice';
import * as autoRunFiles from '../domain/record/auto-run-files';
import * as autonomousDecisions from '../domain/planning/autonomous-decisions';
import * as blockedReport from '../domain/fleet/blocked-report';
import * as budget from '../domain/fleet/budget';
import * as caps from '../domain/text/caps';
import * as checkPrograms from '../domain/plan/check-programs';
import * as config from '../domain/config/config';
import * as decisionFixes from '../domain/saga/decision-fixes';
import * as elicitation from '../domain/planning/elicitation';
import * as environment from '../domain/planning/environment';
import * as failure from '../domain/saga/failure';
import * as flags from '../domain/request/flags';
import * as flagsResult from '../domain/contract/flags-result';
import * as fleet from '../domain/fleet/fleet';
import * as fleetRun from '../domain/fleet/fleet-run';
import * as intake from '../domain/request/intake';
import * as interactions from '../domain/saga/interactions';
import * as memory from '../domain/planning/memory';
import * as milestoneFailure from '../domain/fleet/milestone-failure';
import * as milestoneRecords from '../domain/saga/milestone-records';
import * as modeResolution from '../domain/request/mode-resolution';
import * as naming from '../domain/contract/naming';
import * as plan from '../domain/plan';
import * as planReview from '../domain/planning/plan-review';
import * as planner from '../domain/planning/planner';
import * as profileResolution from '../domain/config/profile-resolution';
import * as processEnd from '../domain/text/process-end';
import * as progress from '../domain/saga/phase-progress';
import * as reconciliation from '../domain/record/reconciliation';
import * as reconciliationInput from '../domain/contract/reconciliation';
import * as review from '../domain/fleet/review';
import * as rounds from '../domain/saga/rounds';
import * as runModes from '../domain/request/run-modes';
import * as sagaDir from '../domain/contract/saga-dir';
import * as sagaInput from '../domain/saga/saga-input';
import * as sagaState from '../domain/saga/saga-state';
import * as schedule from '../domain/fleet/schedule';
import * as searchAttributes from '../domain/contract/search-attributes';
import * as specChanges from '../domain/fleet/spec-changes';
import * as specEdit from '../domain/fleet/spec-edit';
import * as state from '../domain/contract/state';
import * as taskOutcome from '../domain/fleet/task-outcome';
import * as unachievable from '../domain/planning/unachievable';
import * as unrunnableChecks from '../domain/fleet/unrunnable-checks';
import * as units from '../domain/config/units';
import * as usage from '../domain/agents/usage';
import * as zodErrors from '../domain/text/zod-errors';
import * as ciWatch from '../domain/delivery/ci-watch';
import * as deliveryConfig from '../domain/delivery/delivery-config';
import * as forgeShapes from '../domain/delivery/forge-shapes';
import * as prBody from '../domain/delivery/pr-body';
import * as pullRequests from '../domain/record/pull-requests';
import * as reviewFixes from '../domain/delivery/review-fixes';
import * as stack from '../domain/delivery/stack';
import * as watchRules from '../domain/delivery/watch-rules';
import * as terminal from '../domain/text/terminal';
import * as trackerIssue from '../domain/tracker/issue';
import * as issueReplies from '../domain/tracker/issue-replies';
import * as intakeSource from '../domain/tracker/intake-source';
import * as issueSync from '../domain/tracker/issue-sync';
import * as watchSaga from '../domain/tracker/watch-saga';
import * as sagaStart from '../domain/saga/saga-start';
import * as trackerRef from '../domain/tracker/tracker-ref';
import * as workpad from '../domain/tracker/workpad';
import * as workpadUpdates from '../domain/tracker/workpad-updates';
import * as workpadText from '../domain/tracker/workpad-text';

const SHARED_DOMAIN_MODULES = {
  acceptanceIssues,
  adjustmentApproval,
  answerChoices,
  autoPickNotice,
  autoRunFiles,
  autonomousDecisions,
  blockedReport,
  budget,
  caps,
  checkPrograms,
  config,
  decisionFixes,
  elicitation,
  environment,
  failure,
  flags,
  flagsResult,
  fleet,
  fleetRun,
  intake,
  interactions,
  memory,
  milestoneFailure,
  milestoneRecords,
  modeResolution,
  naming,
  plan,
  planReview,
  planner,
  processEnd,
  profileResolution,
  progress,
  reconciliation,
  reconciliationInput,
  review,
  rounds,
  runModes,
  sagaDir,
  sagaInput,
  sagaState,
  schedule,
  searchAttributes,
  specChanges,
  specEdit,
  state,
  taskOutcome,
  unachievable,
  unrunnableChecks,
  units,
  usage,
  zodErrors,
  ciWatch,
  deliveryConfig,
  forgeShapes,
  prBody,
  pullRequests,
  reviewFixes,
  stack,
  watchRules,
  terminal,
  trackerIssue,
  issueReplies,
  intakeSource,
  issueSync,
  watchSaga,
  sagaStart,
  trackerRef,
  workpad,
  workpadUpdates,
  workpadText,
};

/** Parses once through every schema reachable from `value`, so each one's lazy cache exists. */
export function fillSchemaCaches(value: unknown, seen = new Set<unknown>()): void {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value)) return;
  seen.add(value);
  if (value instanceof ZodType) {
    // An object's shape (its keys) and an enum's values are cached on their first successful type check.
    if (value instanceof ZodObject) value.safeParse({});
    if (value instanceof ZodEnum) value.safeParse(value.options[0]);
    if (value instanceof ZodNativeEnum) value.safeParse(Object.values(value.enum as object)[0]);
    // A regex check resets its pattern's lastIndex before each test: the check gets a copy of the pattern
    // (an exported pattern is frozen with its module) and is frozen first, so the SDK's deep freeze does not
    // reach the copy (a non-global pattern's lastIndex carries nothing from one test to the next).
    if (value instanceof ZodString)
      for (const check of value._def.checks)
        if (check.kind === 'regex') Object.freeze(Object.assign(check, { regex: new RegExp(check.regex) }));
    fillSchemaCaches(value._def, seen); // the schemas inside it
    if (value instanceof ZodObject) fillSchemaCaches(value.shape, seen);
    return;
  }
  if (typeof value === 'function') return;
  for (const item of Array.isArray(value) ? value : Object.values(value)) fillSchemaCaches(item, seen);
}

fillSchemaCaches(SHARED_DOMAIN_MODULES);
