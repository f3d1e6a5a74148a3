/**
 * The CLI's listener of an experiment: notes on stderr, a progress bar of stored runs with the
 * accuracy so far (cli-progress, redrawn in place on a terminal, every 5 s otherwise), Ctrl-C
 * cancelling the experiment (the run in flight is dropped; `flowlab resume` finishes the rest),
 * and the outcome turned into an exit path (halted or failed: an Error, exit 1).
 */
import { Presets, SingleBar } from 'cli-progress';
import type { ExperimentEvent, ExperimentHandle, ExperimentOutcome } from '../core/experiments/index.ts';
import { CommandError, EXIT } from './errors.ts';
import type { Io } from './io.ts';

export interface Progress {
  /** Pass as `startExperiment`'s `onEvent`. */
  onEvent: (event: ExperimentEvent) => void;
  /** Follows a started experiment until it ends: Ctrl-C cancels it; the bar is stopped after. */
  follow(handle: ExperimentHandle): Promise<ExperimentOutcome>;
}

/** A progress listener; `onStarted` prints the command's header line before the bar starts. */
export function progress(io: Io, onStarted?: (e: Extract<ExperimentEvent, { type: 'started' }>) => void): Progress {
  const bar = new SingleBar(
    {
      stream: process.stderr,
      format: 'tasks {bar} {value}/{total} | acc {acc} | {eta_formatted} left',
      noTTYOutput: !io.isTTY,
      notTTYSchedule: 5000,
      hideCursor: io.isTTY,
    },
    Presets.shades_classic,
  );
  let started = false;
  const stop = () => {
    if (started) bar.stop();
    started = false;
  };
  return {
    onEvent(e) {
      if (e.type === 'note') io.stderr(`${e.message}\n`);
      else if (e.type === 'started') {
        onStarted?.(e);
        bar.start(e.total, e.done, { acc: '-' });
        started = true;
      } else if (e.type === 'run' && e.status !== 'cancelled') bar.update(e.done, { acc: `${((e.correctRuns / e.done) * 100).toFixed(0)}%` });
      else if (e.type === 'finished') stop();
    },
    async follow(handle) {
      const onSigint = () => {
        io.stderr('\nCancelling: the run in flight is dropped; `flowlab resume` finishes the rest.\n');
        handle.cancel();
      };
      process.once('SIGINT', onSigint);
      try {
        return await handle.done;
      } finally {
        process.off('SIGINT', onSigint);
        stop();
      }
    },
  };
}

/** Throws what ended an experiment badly: its error, or `experiment <id> halted: <why>`. Returns the outcome otherwise. */
export function settled(outcome: ExperimentOutcome): ExperimentOutcome {
  if (outcome.halted) throw new CommandError('HALTED', `experiment ${outcome.experimentId} halted: ${outcome.message}`);
  if (outcome.error !== undefined) throw outcome.error;
  return outcome;
}

/** The exit code of a finished experiment: 0 completed, 130 cancelled. */
export const exitOf = (o: ExperimentOutcome): number => (o.status === 'completed' ? EXIT.ok : EXIT.cancelled);
