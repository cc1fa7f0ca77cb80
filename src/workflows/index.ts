// The workflows a saga worker registers. Each lives in its own file.
export { sagaWorkflow } from './saga';
export { planningWorkflow } from './planning';
export { implementationWorkflow } from './implementation';
export { taskWorkflow } from './task';
export { validationWorkflow } from './validation';
export { acceptanceWorkflow } from './acceptance';
