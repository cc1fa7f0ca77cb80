/**
 * All activities of a saga worker, built from their factories. Every one of them is host-bound: it touches
 * the repo, its worktrees or the saga directory, so it runs on the per-host task queue.
 */
import { createAgentActivities } from './agents';
import { createArtifactActivities } from './artifacts';
import { createCheckResolutionActivities } from './planning/check-resolution';
import { createDiscoveryActivities } from './planning/discovery';
import { createForgeActivities } from './forge/delivery-activities';
import { createGitActivities, createIntegrationGitActivities, createTaskGitActivities } from './git';
import { createMemoryActivities } from './planning/memory';
import { createNotifyActivities } from './notify/notify';
import { createProgressActivities } from './artifacts/projector';
import { createRoleAgentActivities } from './agents/roles';
import { createSagaSetupActivities } from './planning/saga-setup';
import { createTaskAttemptActivities } from './task-attempt';
import { createSagaAnswerActivities } from './tracker/saga-answers';
import { createTrackerActivities } from './tracker/tracker-activities';
import { createValidationActivities } from './validation';

export interface ActivityDeps {
  sagaHome: string;
  /** Aborted when this host's workers start to shut down (see createSagaWorkers). */
  hostStopping?: AbortSignal;
}

export function createActivities(deps: ActivityDeps) {
  const artifacts = createArtifactActivities({ sagaHome: deps.sagaHome });
  const agents = createAgentActivities({ sagaHome: deps.sagaHome });
  const git = createGitActivities({ sagaHome: deps.sagaHome });
  const taskGit = createTaskGitActivities({ git });
  const validation = createValidationActivities();
  const roleAgents = createRoleAgentActivities({ agents, sagaHome: deps.sagaHome });
  return {
    ...git,
    ...taskGit,
    ...createIntegrationGitActivities({ git }),
    ...createTaskAttemptActivities({ taskGit, roleAgents, validation }),
    ...createDiscoveryActivities(),
    ...createCheckResolutionActivities(),
    ...validation,
    ...artifacts,
    ...agents,
    ...roleAgents,
    ...createSagaSetupActivities({ artifacts }),
    ...createMemoryActivities({ sagaHome: deps.sagaHome, artifacts }),
    ...createProgressActivities({
      artifacts,
      cleanupSagaWorktrees: git.cleanupSagaWorktrees,
      hostStopping: deps.hostStopping,
    }),
    // Delivery to a forge (`delivery: pr`): the token is read from the worker's environment at each call.
    ...createForgeActivities(),
    // Intake from a tracker (`saga start --from`, `saga watch`): the issue, the write-back, the replies.
    ...createTrackerActivities(),
    // Replies on the issue answer through the saga's respond Update; the watch counts its running sagas.
    ...createSagaAnswerActivities(),
    // Chat notifications; configured from the worker's environment.
    ...createNotifyActivities({ sagaHome: deps.sagaHome }),
  };
}

export type SagaActivities = ReturnType<typeof createActivities>;
