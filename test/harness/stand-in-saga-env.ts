/**
 * A time-skipping test server set up for a stand-in saga (test/harness/workflows/*-parent.ts): the saga's
 * search attributes registered (its children are started with SagaName), the parent's workflow bundle, and
 * the run settings a saga fixes at its start from the defaults of saga.config.yaml. The fleet-decision and
 * delivery-decision tests each start one.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { createArtifactActivities } from '../../src/activities/artifacts';
import { createSagaSetupActivities } from '../../src/activities/planning/saga-setup';
import { SAGA_SEARCH_ATTRIBUTES } from '../../src/domain/contract/search-attributes';
import type { RunSettings } from '../../src/domain/saga/saga-input';
import { createTimeSkippingEnv } from './time-skipping';

export interface StandInSagaEnv {
  env: TestWorkflowEnvironment;
  workflowBundle: { code: string };
  settings: RunSettings;
}

/** `workflowsPath`: the stand-in parent's module (it re-exports the real workflows it starts). */
export async function createStandInSagaEnv(workflowsPath: string, label: string): Promise<StandInSagaEnv> {
  const env = await createTimeSkippingEnv();
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      SAGA_SEARCH_ATTRIBUTES.map((key) => [
        key.name,
        key.type === SearchAttributeType.BOOL
          ? temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL
          : temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
  const workflowBundle = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
  const home = mkdtempSync(path.join(os.tmpdir(), `${label}-`));
  const settings = await createSagaSetupActivities({
    artifacts: createArtifactActivities({ sagaHome: home }),
  }).loadRunSettings({ repo: home, sagaHome: home });
  return { env, workflowBundle, settings };
}
