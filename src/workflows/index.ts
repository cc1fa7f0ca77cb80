// The workflows a saga worker registers, one per phase folder (saga/, planning/, fleet/, task/, delivery/); each lists
// its handlers at the top of its function. Shared pieces (activity stubs, asking, patches) stay here.
export { sagaWorkflow } from './saga/saga';
export { planningWorkflow } from './planning/planning';
export { implementationWorkflow } from './fleet/implementation';
export { taskWorkflow } from './task/task';
export { validationWorkflow } from './saga/validation';
export { acceptanceWorkflow } from './saga/acceptance';
export { deliveryWorkflow } from './delivery/delivery';
export { issueSyncWorkflow } from './tracker/issue-sync';
export { trackerWatchWorkflow } from './tracker/watch';
