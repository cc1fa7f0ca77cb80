import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Custom search attributes: make sagas findable in the Web UI and `temporal workflow list`. */
export const SagaName = defineSearchAttributeKey('SagaName', SearchAttributeType.KEYWORD);
export const SagaPhase = defineSearchAttributeKey('SagaPhase', SearchAttributeType.KEYWORD);
export const SagaRepo = defineSearchAttributeKey('SagaRepo', SearchAttributeType.KEYWORD);
export const SagaAwaitingInput = defineSearchAttributeKey('SagaAwaitingInput', SearchAttributeType.BOOL);

export const SAGA_SEARCH_ATTRIBUTES = [SagaName, SagaPhase, SagaRepo, SagaAwaitingInput];

/** `--search-attribute NAME=Type` arguments for `temporal server start-dev`. */
export const devServerSearchAttributeArgs = (): string[] =>
  SAGA_SEARCH_ATTRIBUTES.flatMap((key) => [
    '--search-attribute',
    `${key.name}=${key.type === SearchAttributeType.BOOL ? 'Bool' : 'Keyword'}`,
  ]);
