/**
 * Every feature of the API, in order: the method list (methods.ts, `npm run api:methods`), the
 * allowlist the hosts check, `FlowlabApi`, the payload schemas, the handlers, the typed client
 * and the Electron relay all follow from this list. A new feature is one file here and one line
 * below (plus its host part in lab.ts `LabHost` when it has lab methods).
 */
import { annotationsFeature } from './annotations.ts';
import { appFeature } from './app.ts';
import { cardsFeature } from './cards.ts';
import { catalogueFeature } from './catalogue.ts';
import { evaluationsFeature } from './evaluations.ts';
import { experimentsFeature } from './experiments.ts';
import { forkFeature } from './fork.ts';
import { jobsFeature } from './jobs.ts';
import { downloadsFeature, massJobsFeature, studyJobsFeature, trainLoopFeature } from './jobFamilies.ts';
import { learningFeature } from './learning.ts';
import { massFeature } from './mass.ts';
import { playgroundFeature } from './playground.ts';
import { rolloutsFeature } from './rollouts.ts';
import { runDiffFeature } from './runDiff.ts';
import { runSearchFeature } from './runSearch.ts';
import { runsFeature } from './runs.ts';
import { runTraceFeature } from './runTrace.ts';
import { studiesFeature } from './studies.ts';
import { workflowsFeature } from './workflows.ts';
import { workshopFeature } from './workshop.ts';

/** The features, in the order of their methods (the lab methods' order is part of the relay's protocol tests). */
export const FEATURES = [
  experimentsFeature,
  runSearchFeature,
  runTraceFeature,
  appFeature,
  catalogueFeature,
  runsFeature,
  trainLoopFeature,
  workflowsFeature,
  massJobsFeature,
  cardsFeature,
  downloadsFeature,
  studyJobsFeature,
  forkFeature,
  jobsFeature,
  rolloutsFeature,
  learningFeature,
  runDiffFeature,
  studiesFeature,
  massFeature,
  workshopFeature,
  evaluationsFeature,
  annotationsFeature,
  playgroundFeature,
] as const;

/** The feature whose methods only a workshop server answers (`WORKSHOP_METHODS`). */
export const WORKSHOP_FEATURE = workshopFeature.name;
