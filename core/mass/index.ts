/**
 * MASS (Sakana AI, "Multi-Agent Self-Supervision") in Flowlab: text workflows (design.ts), the
 * orchestrated run as an ordinary Flowlab trace (compile.ts, run.ts), the self-judge
 * (judge.ts), the optimizer (optimizer.ts) and the inner loop (inner.ts). docs/mass-inner.md.
 */
export * from './types.ts';
export { MassError, type MassErrorCode } from './errors.ts';
export { parseMassDesign, renderMassDesign, designJson, diffMassDesigns, diffText, lineDiff, DESIGN_LIMITS, DESIGN_MARKER, type DesignLimits, type DesignCatalogue, type DesignDiff, type AgentChange, type ParseResult } from './design.ts';
export { compileMass, MASS_BUDGET, type MassBudget, type CompiledMass } from './compile.ts';
export { massFamily, massFamilyNames, massChecks, MASS_CHECKS, FIRST_DESIGNS } from './family.ts';
export { runStep, type StepDeps, type StepSpec, type StepResult } from './stored.ts';
export { runMass, workspaceOf, type MassRunDeps, type MassRunOptions } from './run.ts';
export { judgePair, judgeWorkflow, evidenceOf, VERDICT_SCHEMA, EVIDENCE_CHARS, type JudgeOptions } from './judge.ts';
export { optimize, optimizerPrompt, optimizerSchema, vocabularyOf, takeaways, PROPOSAL_FIELDS, AGENT_ID_POOL, FIELD_POOL, type HistoryEntry, type OptimizerInput, type Optimized } from './optimizer.ts';
export { evolve, settingsOf, summaryOf, EVOLVE_DEFAULTS, type EvolveSpec, type EvolveDeps, type EvolveEvent, type EvolveReport, type EvolveTaskResult, type EvolutionSettings } from './inner.ts';
export { replayEvolution, type EvolutionReplay } from './replay.ts';
export { timelineOf, storedDesign, designDiffOf, type EvolutionTimeline, type TaskTimeline, type TimelineIteration, type TimelineVerdict, type TimelineDesign } from './timeline.ts';
