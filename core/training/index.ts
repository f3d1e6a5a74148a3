export type { Trainer, TrainableModel, SftSequence, PolicySample, SftOptions, PolicyOptions, StepResult } from './port.ts';
export { runTrainLoop, trainRef, newLoopId, checkLoopOptions, loopHyper, type TrainLoopOptions, type TrainLoopReport, type IterationMetrics, type RoleIterationMetrics, type HeldoutResult, type LoopEvent, type LoopModels, type LoopHyper } from './loop.ts';
export { iterationTasks, sampledTaskList, roleStepBatches, iterationSteps, minScoreOf, roleSftBatches, stepKind, wiringRootFailures, classAccuracy, constantBaseline, heldoutAccuracy, versionFile, roleReward, rungMeans, roleIterationMetrics, iterationMetrics, heldoutResult, type RoleBatch, type IterationClock } from './iteration.ts';
export { sampleGroup, scoreGroup, applyPolicyStep, applySftStep, SFT_BATCH, writeRoleVersion, evaluateHeldout, finishExperiment, modelsSnapshot } from './steps.ts';
export type { LoopRun, TrainedRole, RungMeans, SftSchedule, RoleStepKind, ClassAccuracy, ConstantBaseline } from './types.ts';
export { policySamples, sftSequences, isTrainable, chunks } from './samples.ts';
export { TrainingError, type TrainingErrorCode } from './errors.ts';
