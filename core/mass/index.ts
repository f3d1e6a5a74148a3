/**
 * MASS (Sakana AI, "Multi-Agent Self-Supervision") in Flowlab: text workflows (design.ts), the
 * orchestrated run as an ordinary Flowlab trace (compile.ts, run.ts), the self-judge
 * (judge.ts), the optimizer (optimizer.ts) and the inner loop (inner.ts). docs/mass-inner.md.
 */
export * from './types.ts';
export { MassError, type MassErrorCode } from './errors.ts';
export { parseMassDesign, renderMassDesign, designJson, diffMassDesigns, diffText, lineDiff, DESIGN_LIMITS, DESIGN_MARKER, type DesignLimits, type DesignCatalogue, type DesignDiff, type AgentChange, type ParseResult } from './design.ts';
export { compileMass, MASS_BUDGET, type MassBudget, type CompiledMass } from './compile.ts';
export { massFamily, massFamilyNames, massChecks, storedMassChecks, MASS_CHECKS, FIRST_DESIGNS, WORD_CHOICES } from './family.ts';
export { runStep, type StepDeps, type StepSpec, type StepResult } from './stored.ts';
export { runMass, workspaceOf, type MassRunDeps, type MassRunOptions } from './run.ts';
export { massTools, REDELEGATE_TOOL } from './redelegate.ts';
export { judgePair, judgeWorkflow, evidenceOf, VERDICT_SCHEMA, EVIDENCE_CHARS, type JudgeOptions } from './judge.ts';
export { optimize, optimizerPrompt, optimizerSchema, vocabularyOf, takeaways, PROPOSAL_FIELDS, AGENT_ID_POOL, FIELD_POOL, type HistoryEntry, type OptimizerInput, type Optimized } from './optimizer.ts';
export { evolve, settingsOf, summaryOf, verifierVerdict, EVOLVE_DEFAULTS, type OptimizerMode, type EvolveSpec, type EvolveDeps, type EvolveEvent, type EvolveReport, type EvolveTaskResult, type EvolutionSettings } from './inner.ts';
export { replayEvolution, type EvolutionReplay } from './replay.ts';
// The edit language, the learn-design family and the held-out comparison (docs/mass-inner.md, "The edit language").
export { applyEdit, editOptions, editSchema, editText, readEdit, orderedEdit, longestEditChars, EDIT_FIELDS, EditError, type MassEdit, type EditOp, type EditOption } from './edits.ts';
export { optimizeEdit, editPrompt, editProposal, EDIT_TOKENS } from './editOptimizer.ts';
export { collectEdits, keptCalls, choiceSequences, opTable, pairedGain, trainingStates, RFT_DEFAULTS, type RftSpec, type RftProposal, type RftCollection, type RftEvent, type TrainingState } from './optimizerTraining.ts';
export { learnDesignFamily, cuedTool, cuedArguments, designAnswerGrader, DESIGN_CHECKS, DESIGN_EDIT_MENU, DESIGN_FIRST, DESIGN_ARGUMENTS } from './learnDesignFamily.ts';
export { assembleAnswer, ANSWER_TOOL } from './answerTool.ts';
export { compareOnHeldout, formatHeldout, type HeldoutSpec, type DesignComparison } from './heldout.ts';
export { timelineOf, storedDesign, designDiffOf, type EvolutionTimeline, type TaskTimeline, type TimelineIteration, type TimelineVerdict, type TimelineDesign } from './timeline.ts';
// The outer loop, its guards and whole cycles (docs/mass.md).
export { bradleyTerry, rankPlayers, SCORE_TIE_EPS, type Match, type BradleyTerryOptions, type BradleyTerryResult, type PlayerStrength, type RankedPlayer } from './bradleyTerry.ts';
export { ringPairs, ringOrder, runTournament, matchesOf, type RingPair, type RingOptions, type PairVerdict, type JudgedPair } from './tournament.ts';
export { guardRun, describeReason, judgeVerifierAgreement, checkThresholds, hashEnvironment, writeEnvironment, sha256, DEFAULT_THRESHOLDS, type ContractClaim, type QuarantineReason, type GuardVerdict, type Agreement, type GuardThresholds, type ThresholdCheck, type EnvironmentHashes, type ProtectedFile } from './guards.ts';
export { environmentFiles, prepareEnvironment, environmentAfter, reportedScore, expectationOf, simulatedTamper, SIMULATED_TAMPERER, TAMPER_MODES, ENV_FILES, type TamperMode, type TamperAct } from './environment.ts';
export { splitByRank, exportRows, toJsonl, manifestOf, sftSequencesOf, type ExportCall, type ExportTrajectory, type ExportRow, type TrlMessage, type PromptTokenizer } from './sftExport.ts';
export { providerTokenizer, maskedLoss, sftTrain, type SftRunOptions, type SftRunResult } from './train.ts';
export { rankTask, recheckContracts, OUTER_DEFAULTS, type OuterDeps, type OuterOptions, type OuterEvent, type RankedRun, type ArmSelection, type TaskRanking } from './outer.ts';
export { runRsi, exportArm, tamperSummary, ARMS, type Arm, type RsiDeps, type RsiOptions, type RsiEvent, type RsiReport, type CycleReport, type ArmCycle, type HeldoutComparison, type HaltReport, type TamperSummary, type ArmExport, type BlindSpotRate, blindSpotRate } from './rsi.ts';
export { MassRankError, type MassRankErrorCode } from './rankErrors.ts';
export { runRank, type RankDeps, type RankResult } from './rank.ts';
export { outerLoopOf, outerLoopsOf, rankingRecord, storeRankings, storeCycle, storeBase, storeHalt, OUTER_RANKING, OUTER_CYCLE, OUTER_BASE, OUTER_HALT, type OuterCut, type OuterRunRow, type OuterTaskRanking, type OuterQuarantine, type OuterCycleArm, type OuterLoopSummary, type OuterLoopView, type CycleRecord, type HaltRecord } from './outerRecords.ts';
export { championOf } from './champions.ts';
export { startRank, startRsi, recordOuterSettings, outerSettingsOf, tasksOf, OUTER_SETTINGS, type OuterSettings, type OuterStartDeps } from './outerLoop.ts';
export { replayOuterLoop, type OuterReplay, type OuterReplayResult } from './outerReplay.ts';
export { rankingsAudit, evolutionAudit, storeJudgeAudit, storedJudgeAudits, JUDGE_AUDIT } from './judgeAudit.ts';
export { defaultEvolutionId, modelMismatch } from './evolutionId.ts';
export { stepsInFlight, defaultStepsInFlight, type InFlightOptions } from './inFlight.ts';
export { checkBlindSpot, sampleWinners, describeBlindSpot, type BlindSpotCheck, type BlindSpotThreshold } from './blindSpotGuard.ts';
export { auditJudgePairs, judgedPairTasks, JUDGE_BAR, type JudgedPairTask, type PairAuditReport } from './pairAudit.ts';
export { evolveEventLine, heldoutOfEvolution, planEvolution, SELECT_TASKS_DEFAULT, type EvolutionOptions, type EvolutionPlan, type HeldoutOfTask } from './evolveJob.ts';
