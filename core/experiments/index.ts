export { executePending, countFailures, scoreRun, runIdOf, runSeedOf, taskOf, type ExecuteOptions } from '../pipeline/index.ts';
export { summarizeRuns, type ExperimentReport } from './summary.ts';
export { replayExperiment, replayRun, canonical, type ReplayOptions, type ReplayReport, type NodeMismatch } from './replay.ts';
export { startExperiment } from './service.ts';
export { checkFaultSpecs, buildInjector, buildDesignInjector, replayDesignFaultsFor, blameReportOf } from '../faults/experimentFaults.ts';
export {
  ExperimentSpecError,
  type ExperimentSpecErrorCode,
  type ExperimentSpec,
  type NewExperimentSpec,
  type ResumeSpec,
  type ServiceDeps,
  type StartOptions,
  type ExperimentEvent,
  type ExperimentOutcome,
  type ExperimentHandle,
  type ExperimentStatusEnd,
  type WorkflowSource,
  type CorpusRecord,
} from './spec.ts';
export { startTrainLoop, trainableRoles, type TrainLoopSpec, type TrainLoopHandle } from './trainLoop.ts';
export { loopPlanOf, resumeTrainLoop, storedLoopSpec, trainLoopOf, type ResumeTrainLoopSpec } from './trainLoopResume.ts';
export { launchTrainLoop } from './trainLoop.ts';
export type { TrainLoopPlan } from './trainLoop.ts';
export { compareRuns, type CompareReport, type PairedDelta } from './compare.ts';
export { forkRun, forkPlan, forkOf, reachableFrom, parseNodeRef, ForkError, type ForkSpec, type ForkDeps, type ForkOutcome, type ForkCallCounts, type ForkConfig, type ForkErrorCode, type ForkSide, type Intervention, type RecordedCall } from './fork.ts';
export { counterfactualBlame, scoreCounterfactual, parseIntervene, describeIntervene, describeWith, type CounterfactualReport, type CounterfactualRun, type CounterfactualTrial, type CounterfactualOptions, type InterveneOn, type CorrectWith, type RateCell } from './counterfactual.ts';
export { nodeOracle, type OracleContext } from './oracle.ts';
export { evaluationsOf, stepwiseRows, type StepwiseRow } from './counterfactualExport.ts';
export { storedWorkflowOptions, type StoredWorkflowOptions } from './storedWorkflow.ts';
