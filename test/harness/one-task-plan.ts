/** The greeting plan cut to one milestone with one task and one exit criterion: the quickest whole saga. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { Client } from '@temporalio/client';
import { prepareSaga, startSaga } from '../../src/client/commands/start';
import { createSampleRepo, greetingPlan } from '../../src/demo/sample-repo';

interface PlanShape {
  exit_criteria: unknown[];
  milestones: { tasks: unknown[] }[];
}

/** Writes `<dir>/one-task-plan.yaml` (plan name `name`) and returns its path. */
export function writeOneTaskPlan(dir: string, name: string): string {
  const plan = greetingPlan() as unknown as PlanShape & Record<string, unknown>;
  const first = plan.milestones[0]!;
  const cut = {
    ...plan,
    name,
    exit_criteria: plan.exit_criteria.slice(0, 1),
    milestones: [{ ...first, tasks: first.tasks.slice(0, 1) }],
  };
  const file = path.join(dir, 'one-task-plan.yaml');
  writeFileSync(file, YAML.stringify(cut));
  return file;
}

/** A sample repo under `dir` and its one-task saga `name` for `goal`, prepared and started; its input. */
export async function startOneTaskSaga(client: Client, dir: string, name: string, goal: string) {
  const repo = createSampleRepo(path.join(dir, 'greeting'));
  const input = await prepareSaga({ repo, argumentsText: goal, plan: writeOneTaskPlan(dir, name), name });
  await startSaga(client, input);
  return input;
}
