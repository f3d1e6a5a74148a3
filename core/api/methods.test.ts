import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { methodsModuleText } from './feature.ts';
import { FEATURES, WORKSHOP_FEATURE } from './features/index.ts';
import { API_METHODS, LAB_METHODS, WORKSHOP_METHODS } from './methods.ts';
import { payloadSchemas } from './contract.ts';

describe('the method list derived from the features', () => {
  it('is the file the features generate (run `npm run api:methods` after changing a feature)', () => {
    const text = readFileSync(new URL('./methods.ts', import.meta.url), 'utf8');
    expect(text).toBe(methodsModuleText(FEATURES, WORKSHOP_FEATURE));
  });

  it('lists each method once, with one payload schema each; the lab methods are a subset', () => {
    expect(new Set(API_METHODS).size).toBe(API_METHODS.length);
    expect(Object.keys(payloadSchemas)).toEqual([...API_METHODS]);
    expect(LAB_METHODS.every((m) => (API_METHODS as readonly string[]).includes(m))).toBe(true);
    expect(WORKSHOP_METHODS).toEqual(['getWorkshop', 'joinWorkshop', 'submitPrediction', 'controlWorkshop', 'listAttendees', 'removeAttendee']);
  });

  it('keeps the lab methods in the order the relay and its tests have always used', () => {
    expect(LAB_METHODS).toEqual([
      'listExamples', 'listDatasets', 'listModels', 'addModel', 'testModel', 'startRun', 'cancelRun', 'resumeRun', 'activeRuns',
      'startTrainLoop', 'cancelTrainLoop', 'listWorkflowFiles', 'readWorkflowFile', 'saveWorkflowFile',
      'startEvolve', 'startRank', 'startRsi', 'cancelMass', 'distillCard', 'startDownload', 'cancelDownload',
      'listStudyPlans', 'startStudy', 'cancelStudy', 'forkRun',
      'listJobKinds', 'listJobs', 'startJob', 'cancelJob', 'resumeJob',
      'startGeneration', 'cancelGeneration',
    ]);
    expect(API_METHODS.length).toBe(68);
  });
});
