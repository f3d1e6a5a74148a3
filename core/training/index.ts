export type { Trainer, LoadOptions, TrainableModel, SftSequence, PolicySample, SftOptions, PolicyOptions, StepResult, OptimizerState } from './port.ts';
export { runTrainLoop, trainRef, newLoopId, checkLoopOptions, loopHyper, type TrainLoopOptions, type TrainLoopReport, type IterationMetrics, type RoleIterationMetrics, type HeldoutResult, type LoopEvent, type LoopModels, type LoopHyper, type TrainLoopState } from './loop.ts';
export { iterationTasks, sampledTaskList, roleStepBatches, iterationSteps, minScoreOf, roleSftBatches, stepKind, wiringRootFailures, classAccuracy, constantBaseline, heldoutAccuracy, versionFile, roleReward, rungMeans, roleIterationMetrics, iterationMetrics, heldoutResult, type RoleBatch, type IterationClock } from './iteration.ts';
export { sampleGroup, scoreGroup, applyPolicyStep, applySftStep, SFT_BATCH, writeRoleFile, versionRecord, adoptVersion, evaluateHeldout, finishExperiment, modelsSnapshot } from './steps.ts';
export type { LoopRun, TrainedRole, RungMeans, SftSchedule, RoleStepKind, ClassAccuracy, ConstantBaseline } from './types.ts';
export { policySamples, sftSequences, isTrainable, chunks } from './samples.ts';
export { TrainingError, type TrainingErrorCode } from './errors.ts';
export { loopDebris, loopFolder, sweepLoopFolder, type SweepReport } from './recover.ts';
