/**
 * The job families as features: train loops, MASS jobs, model downloads and study jobs. Their
 * method interfaces, host parts, events and handlers stay in their own files (trainLoop.ts,
 * massJobs.ts + massJobHandlers.ts, downloads.ts + downloadHandlers.ts, studyJobs.ts +
 * studyJobHandlers.ts; the train loop's interface in lab.ts), their payload schemas in
 * jobPayloads.ts; this file only registers them. All are lab methods.
 */
import { downloadHandlers } from '../downloadHandlers.ts';
import type { DownloadApiAdditions } from '../downloads.ts';
import { defineFeature, labMethod, labOf } from '../feature.ts';
import { downloadSchemas, massJobSchemas, studyJobSchemas, trainLoopSchemas } from '../jobPayloads.ts';
import type { LabHost, TrainLoopApi } from '../lab.ts';
import { massJobHandlers } from '../massJobHandlers.ts';
import type { MassJobApiAdditions } from '../massJobs.ts';
import { studyJobHandlers } from '../studyJobHandlers.ts';
import type { StudyJobApiAdditions } from '../studyJobs.ts';

/** The deps of a job family: the lab host (UNAVAILABLE without one). */
interface JobDeps {
  lab?: LabHost | undefined;
}

const NO_TRAINER = 'this host cannot run train loops';

export const trainLoopFeature = defineFeature<TrainLoopApi>()({
  name: 'trainLoop',
  payloads: trainLoopSchemas,
  lab: ['startTrainLoop', 'cancelTrainLoop'],
  handlers: (deps: JobDeps) => ({
    startTrainLoop: async (payload) => labMethod(deps, 'startTrainLoop', NO_TRAINER)(payload),
    cancelTrainLoop: async (payload) => labMethod(deps, 'cancelTrainLoop', NO_TRAINER)(payload),
  }),
});

export const massJobsFeature = defineFeature<MassJobApiAdditions>()({
  name: 'massJobs',
  payloads: massJobSchemas,
  lab: ['startEvolve', 'startRank', 'startRsi', 'cancelMass'],
  handlers: (deps: JobDeps) => massJobHandlers((method) => labOf(deps, method)),
});

export const downloadsFeature = defineFeature<DownloadApiAdditions>()({
  name: 'downloads',
  payloads: downloadSchemas,
  lab: ['startDownload', 'cancelDownload'],
  handlers: (deps: JobDeps) => downloadHandlers((method) => labOf(deps, method)),
});

export const studyJobsFeature = defineFeature<StudyJobApiAdditions>()({
  name: 'studyJobs',
  payloads: studyJobSchemas,
  lab: ['listStudyPlans', 'startStudy', 'cancelStudy'],
  handlers: (deps: JobDeps) => studyJobHandlers((method) => labOf(deps, method)),
});
