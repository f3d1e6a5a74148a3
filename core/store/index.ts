/**
 * The experiment store: the port (port.ts: `Store`, `ImproveRepo`, `WeightsRepo`) that the rest of
 * Flowlab depends on, and its better-sqlite3 adapter (`SqliteStore`, opened by `openStore`), the
 * only place Flowlab writes SQL.
 * Tables: experiments, experiment_tasks (the planned task list), runs, node_events, model_calls,
 * schema_migrations; the run search index (run_docs, run_fts, run_blame: runSearch.ts). See schema.ts for the layout.
 */
export { openStore, type OpenStoreOptions } from './openStore.ts';
export type { ImproveRepo, ReproRepo, RunWithEvents, Store, StudiesRepo, TrainLoopsRepo, WeightsRepo, StoreArea } from './port.ts';
export { SqliteTrainLoopsRepo, type NewTrainLoop, type TrainLoopExperiment, type TrainLoopRow, type TrainLoopStatus } from './trainLoops.ts';
export { openStores, SqliteStore } from './SqliteStore.ts';
export { StoreError, type StoreErrorCode } from './errors.ts';
export { CONFIG_MIGRATIONS, CONFIG_VERSION, decodeExperimentConfig, experimentConfigSchema, decodeStored, migrateConfig, missingConfigField, modelConfigSchema, storedCards, storedModels, storedRollouts, type ExperimentConfig } from './config.ts';
export { computeWorkflowHash, newExperimentId } from './ids.ts';
export { isPidAlive } from './liveness.ts';
export { SCHEMA_VERSION, type Migration } from './schema.ts';
export type { MigrationReport } from './migrate.ts';
export type {
  ExperimentCall,
  ExperimentKind,
  ExperimentRow,
  ExperimentStatus,
  ExperimentSummary,
  NewExperiment,
  PlannedTask,
} from './types.ts';
export { SqliteImproveRepo, type AdvantageRow, type Card } from './improve.ts';
export { SqliteMassRepo, canonicalJson, type MassRecord, type MassRepo } from './mass.ts';
export { SqliteWeightsRepo, newWeightVersionId, type WeightVersion, type NewWeightVersion } from './weights.ts';
export { SqliteStudiesRepo, type StudyRow, type StudyStatus } from './studies.ts';
export { SqliteReproRepo, type ReproKind, type ReproRecord } from './repro.ts';
export { SqliteWorkshopRepo, type WorkshopPredictionRow, type WorkshopRepo, type WorkshopResultRow, type WorkshopSessionRow } from './workshops.ts';
export { SqliteForksRepo, type ForkLink, type ForksRepo } from './forks.ts';
export { SqliteEndpointDecisionsRepo, type EndpointDecisionsRepo } from './endpointDecisions.ts';
export type { RoleTrendRow } from './roleTrends.ts';
export { ANNOTATION_LIMITS, annotationProblem, newAnnotationSchema, SqliteAnnotationsRepo, TAG_PATTERN, type Annotation, type AnnotationQuery, type AnnotationsRepo, type NewAnnotation } from './annotations.ts';
export { FAILURE_CLASSES, ftsQuery, RUN_PAGE_MAX, RUN_SORT_KEYS, RunQueryError, SEARCH_FIELDS, taskLabel, type RunHit, type RunQuery, type RunSearchResult, type RunSortKey, type SearchField } from './runSearch.ts';
