/**
 * The pipeline: one task through one workflow, from the planned task to the stored run, in one
 * direction only:
 *
 *   task (store row -> Task, taskOf) -> engine (runGraph: the workflow, a designed run spliced in)
 *     -> grade (the dataset's Grader, only when the run completed)
 *     -> credit (core/blame/credit: roots, cascades, blame per role)
 *     -> ladder (core/reward: the reward rungs)
 *     -> store (Store.saveRun: record, node events and model calls in one transaction)
 *
 * Nothing here reaches back up: the pipeline imports the modules it composes (engine, design,
 * tasks, blame, reward, results, store, workflow, model, trace) and none of the modules built on
 * it (experiments, training, mass, distill, studies, otel, repro, api). The dependency rule
 * `core-layers` (.dependency-cruiser.cjs, docs/architecture.md) fails an upward import.
 */
export { executePending, gradedRun, countFailures, scoreRun, runIdOf, runSeedOf, taskOf, type ExecuteOptions } from './execute.ts';
