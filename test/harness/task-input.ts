/**
 * The input of a standalone task workflow (no saga around it): the saga context a saga would pass, with
 * settings loaded from the repo's saga.config.yaml, and the task's branch, worktree and ports. Reports to
 * the (never started) saga are dropped.
 */
import path from 'node:path';
import { createArtifactActivities } from '../../src/activities/artifacts';
import { createSagaSetupActivities } from '../../src/activities/planning/saga-setup';
import { parseFlags } from '../../src/domain/request/flags';
import { hostTaskQueue, sagaWorkflowId, taskBranch } from '../../src/domain/contract/naming';
import type { PlanTask } from '../../src/domain/plan';
import type { SagaContext } from '../../src/domain/saga/saga-input';
import type { TaskInput } from '../../src/workflows/task/task';
import type { SagaTestEnv } from './saga-env';

export async function standaloneTaskInput(
  env: SagaTestEnv,
  options: { name: string; repo: string; spec: PlanTask; goal: string; task?: number; portBase: number },
): Promise<TaskInput> {
  const { name, repo, spec, goal } = options;
  const taskNo = options.task ?? 1;
  const setup = createSagaSetupActivities({
    artifacts: createArtifactActivities({ sagaHome: env.sagaHome }),
  });
  const ctx: SagaContext = {
    name,
    sagaWorkflowId: sagaWorkflowId(name),
    repo,
    base: 'main',
    goal,
    sagaDir: path.join(env.sagaHome, name),
    worktreeRoot: path.dirname(repo),
    hostQueue: hostTaskQueue(env.hostId),
    flags: parseFlags(goal, {}),
    executionMode: 'inline',
    // The repository's config is these tests' own: trusted, as `--trust-repo-config` would.
    settings: await setup.loadRunSettings({ repo, sagaHome: env.sagaHome, trustRepoConfig: true }),
    agent: null,
  };
  return {
    ctx,
    milestone: 1,
    spec,
    ref: `1.${taskNo}`,
    key: `m1t${taskNo}`,
    branch: taskBranch(name, 1, taskNo, spec.slug),
    worktree: path.join(ctx.worktreeRoot, `saga-${name}-m1t${taskNo}`),
    base: 'main',
    mergeBranches: [],
    delegation: 1,
    retained: { evidence: [], notes: [] },
    portBase: options.portBase,
  };
}
