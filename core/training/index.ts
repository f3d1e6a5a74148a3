export type { Trainer, TrainableModel, SftSequence, PolicySample, SftOptions, PolicyOptions, StepResult } from './port.ts';
