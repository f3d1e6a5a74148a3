/**
 * Jobs: every long-running kind of work, registered once (see docs/architecture.md, "A new kind
 * of work"). The experiment kinds' one spec schema, shared by the CLI and the lab
 * (experimentSpec.ts).
 */
export { buildExperimentSpec, EXPERIMENT_KINDS, experimentSpecSchemas, ROLLOUT_DEFAULTS, type ExperimentInput, type ExperimentKindName, type NewExperiment } from './experimentSpec.ts';
export { JobError, type JobContext, type JobEnd, type JobErrorCode, type JobEvent, type JobKind, type JobProgress, type JobRun, type JobStatus, type StoredCodec } from './kind.ts';
export { builtinJobKinds, JobRegistry, progressFold, type JobKindInfo } from './registry.ts';
