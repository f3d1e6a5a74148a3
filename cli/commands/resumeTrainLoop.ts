import { resumeTrainLoop } from '../../core/experiments/index.ts';
import type { SqliteStore } from '../../core/store/index.ts';
import type { LoopEvent, TrainLoopReport } from '../../core/training/index.ts';
import { fileModelPort, llamaProvider, loadTrainer } from '../../models/factory.ts';
import { asCliSync } from '../errors.ts';
import type { Io } from '../io.ts';
import { formatTrainLoop, trainLoopJson } from './trainLoop.ts';

/**
 * `flowlab resume <loop-id | experiment-id of a loop>`: continues a stored train loop from its
 * last complete iteration (core/experiments/trainLoopResume.ts) and prints its report as
 * `flowlab train-loop` does (every iteration, the earlier ones included). Exit 0 when it
 * completed (or had nothing left), 130 when stopped with Ctrl-C.
 */
export async function resumeTrainLoopCommand(
  store: SqliteStore,
  id: string,
  values: { models: { default?: string; roles: Record<string, string> }; force: boolean; json: boolean },
  io: Io,
): Promise<number> {
  const onEvent = (e: LoopEvent) => {
    if (e.type === 'iteration') io.stderr(`iteration ${e.metrics.iteration}: score ${e.metrics.score.toFixed(3)} (${e.metrics.seconds.total.toFixed(2)} s)\n`);
    else if (e.type === 'heldout') io.stderr(`Held-out ${e.phase}: mean reward ${e.result.score.toFixed(3)} over ${e.result.samples} samples (${e.result.experimentId})\n`);
  };
  const spec = { id, models: values.models, force: values.force };
  const trainer = await loadTrainer();
  const started = asCliSync(() => resumeTrainLoop(spec, { store, models: fileModelPort(llamaProvider), trainer }, { onEvent }));
  const { loop } = started;
  if (started.nothing) {
    io.stderr(`Nothing to resume: train loop ${loop.id} completed ${loop.done} of ${loop.iterations} iterations.\n`);
    if (values.json) io.stdout(JSON.stringify({ loopId: loop.id, nothingToResume: true, done: loop.done, iterations: loop.iterations }) + '\n');
    return 0;
  }
  io.stderr(`Resuming train loop ${loop.id}: ${loop.done} of ${loop.iterations} iterations done (${loop.status}).\n`);
  const onSigint = () => {
    io.stderr('\nStopping after this iteration: the versions written so far are recorded.\n');
    started.handle.cancel();
  };
  process.once('SIGINT', onSigint);
  let report: TrainLoopReport;
  try {
    report = await started.handle.done;
  } finally {
    process.off('SIGINT', onSigint);
  }
  io.stdout(values.json ? JSON.stringify(trainLoopJson(report)) + '\n' : formatTrainLoop(report));
  return report.cancelled ? 130 : 0;
}
