/**
 * The plan file (the plan file contract): schema, parsing and the semantic checks zod alone cannot express
 * (references, cycles, ownership overlaps). Pure: the planning workflow validates planner output with it.
 * Plan files' text is read by `./parse-text` (not exported here: it brings the YAML parser). Nothing here
 * throws on bad input; every problem comes back as a message naming file, path and expectation.
 */
export {
  ExitCriterionSchema,
  isSafeRelativePath,
  MAX_SLUG_LENGTH,
  PlanMilestoneSchema,
  PlanSchema,
  PlanTaskSchema,
  SLUG_PATTERN,
  type ExitCriterion,
  type Plan,
  type PlanMilestone,
  type PlanResult,
  type PlanTask,
} from './schema';
export { validatePlan } from './validate';
export { findCycle } from './checks';
export { filesOutsideOwns, ownsWarning } from './owns';
export { findTask, planOutline, planSummary, taskRefsInOrder, type PlanOutline } from './lookups';
