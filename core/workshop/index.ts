/**
 * Workshop mode (docs/workshop.md): scenarios as files, the step state machine, prediction
 * scoring, truths read from what ran, the rehearse/room/live service and the HTML report.
 */
export { commandLine, formatScenarioIssues, parseScenario, RESERVED_FLAGS, scenarioHash, STEP_COMMANDS, TRUTHS, truthChoices, WorkshopError, type Choice, type Scenario, type ScenarioIssue, type ScenarioStep, type StepCommand, type TruthKind, type WorkshopErrorCode } from './scenario.ts';
export { applyControl, CONTROL_ACTIONS, initialState, scorePredictions, secondsLeft, type Prediction, type PredictionScore, type WorkshopControl, type WorkshopState } from './steps.ts';
export { beatsStart, blamedRoleTruth, blindSpotFell, blindSpotKeptTruth, blindSpotRose, blindSpotRoseTruth, type BlindSpotCurve, type BlindSpotPoint, fixSavesTruth, LEARNED_ALPHA, ROLE_TRUTHS, rolesLearnedTruth, tallyBlame, tallyWhatIf, tampererTruth, type BlameTally, type RevealChart, type RevealFact, type RoleHeldout, type StepResult, type TamperView, type WhatIfRun, type WhatIfTally } from './truth.ts';
export { AttendeeRegistry, MAX_ROOM_CAP, type AttendeeEntry } from './attendees.ts';
export { DEFAULT_ROOM_CAP, MAX_ATTENDEE_ID, rehearse, rehearsalSource, rehearsedSteps, WorkshopSession, type StepRunner, type WorkshopSessionOptions } from './service.ts';
export { chartSvg, workshopReportHtml, type ReportStep } from './report.ts';
export type { WorkshopStepSummary, WorkshopStepView, WorkshopView } from './view.ts';
