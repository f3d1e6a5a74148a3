export { parseStudyPlan, planError, formatPlanIssues, StudyError, PlanSchema, CONDITION_KINDS, ZONE_KINDS, type StudyPlan, type StudyCondition, type StudyZone, type StudyModel, type StudyTrain, type ConditionKind, type ZoneKind, type PlanIssue, type StudyErrorCode } from './plan.ts';
export { studyCells, trainingUnits, studyIdOf, loopIdOf, canonicalJson, type StudyCell, type TrainingUnit } from './cells.ts';
export { buildStudyTable, studyTableCsv, studyTimingCsv, STUDY_TIMING_COLUMNS, accuracyText, deltaText, guardText, labelOf, noveltyText, STUDY_CSV_COLUMNS, STUDY_NOVELTY_KINDS, type StudyTable, type StudyTableEntry, type StudyDelta, type StudyRun } from './table.ts';
export { estimateStudy, formatSeconds, speedKey, type StudyEstimate, type StudySpeeds, type RunSpeed, type TrainSpeed, type CellEstimate } from './estimate.ts';
export { studyReportHtml, barChartSvg, CONDITION_COLOURS } from './html.ts';
export { runStudy, inContext, studyTableNow, pendingRuns, estimateRecord, type StudyDeps, type StudyEvent, type StudyOutcome, type StudyRunOptions, type StudyState, type UnitResult } from './run.ts';
export { calibrateStudy, type CalibrateDeps } from './calibrate.ts';
