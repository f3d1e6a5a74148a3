/**
 * Work in flight (issue 26): one scheduler with a global budget fair across lanes
 * (`scheduler.ts`), results committed in id order whatever the width (`ordered.ts`), and the
 * default width from the models in use (`defaults.ts`). docs/scale.md tells how to use it.
 */
export { DEFAULT_CAPACITY, Group, Lane, processScheduler, Scheduler, type InFlightStats } from './scheduler.ts';
export { runOrdered, type OrderedOptions, type OrderedOutcome } from './ordered.ts';
export { defaultParallel, type ParallelDefault } from './defaults.ts';
export { describeDecisions } from './decisions.ts';
