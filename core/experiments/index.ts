export { executePending, countFailures, scoreRun, runIdOf, runSeedOf, taskOf, type ExecuteOptions } from './execute.ts';
export { summarizeRuns, type ExperimentReport } from './summary.ts';
export { replayExperiment, canonical, type ReplayReport, type NodeMismatch } from './replay.ts';
