export type { Trainer, TrainableModel, SftSequence, PolicySample, SftOptions, PolicyOptions, StepResult } from './port.ts';
export { runTrainLoop, trainRef, newLoopId, type TrainLoopOptions, type TrainLoopReport, type IterationMetrics, type RoleIterationMetrics, type HeldoutResult, type LoopEvent, type LoopModels } from './loop.ts';
export { policySamples, sftSequences, isTrainable, chunks } from './samples.ts';
export { TrainingError, type TrainingErrorCode } from './errors.ts';
