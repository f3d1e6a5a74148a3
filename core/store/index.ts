/**
 * The experiment store: better-sqlite3 behind a typed API, the only place Flowlab writes SQL.
 * Tables: experiments, experiment_tasks (the planned task list), runs, node_events, model_calls,
 * schema_migrations. See schema.ts for the layout.
 */
export { openStore, type OpenStoreOptions } from './openStore.ts';
export { Store, type RunWithEvents } from './Store.ts';
export { StoreError, type StoreErrorCode } from './errors.ts';
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
export { ImproveRepo, type AdvantageRow, type Card } from './improve.ts';
export { WeightsRepo, newWeightVersionId, type WeightVersion, type NewWeightVersion } from './weights.ts';
