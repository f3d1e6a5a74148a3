/**
 * `flowlab show <experiment-id>`: the experiment's summary, the table `run` prints at its end
 * (core/experiments `summarizeRuns`, cli/format.ts `formatReport`) read back from the store, with
 * what was run (kind, workflow, dataset, models, seed) above it and where to go next below.
 */
import { blameEvalOf, type BlameEvalView } from '../../core/api/index.ts';
import { errorMessage } from '../../core/errors.ts';
import { summarizeRuns, type ExperimentReport } from '../../core/experiments/index.ts';
import type { Store } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { formatBlame } from '../formatExperiments.ts';
import { formatReport } from '../format.ts';
import { modelsOf } from './ls.ts';

/** What `show <experiment-id>` prints (and `--json` writes). */
export interface ExperimentShow {
  id: string;
  kind: string;
  workflowName: string;
  dataset: string;
  split: string;
  seed: number;
  models: string[];
  status: string;
  createdAt: number;
  finishedAt?: number;
  report: ExperimentReport;
  /** A blame evaluation's report, as `flowlab blame-eval --json` printed it at its end (scored again from the stored runs). */
  blame?: BlameEvalView;
  /** Why a blame evaluation's report could not be scored again (its stored workflow no longer compiles here). */
  blameProblem?: string;
}

/** The summary of experiment `id` from its stored runs. Errors: the store's `NOT_FOUND`. */
export function experimentSummary(store: Store, id: string): ExperimentShow {
  const e = store.getExperiment(id);
  const runs = store.listRuns(e.id);
  const tasksPlanned = store.listTasks(e.id).length;
  // Wall time: from creation to the finish (or the last stored run while it has none).
  const end = e.finishedAt ?? Math.max(e.createdAt, ...runs.map((r) => r.endedAt));
  const report = summarizeRuns(e.id, runs, { tasksPlanned, wallSeconds: (end - e.createdAt) / 1000, status: e.status });
  let blame: Pick<ExperimentShow, 'blame' | 'blameProblem'> = {};
  if (e.kind === 'blame-eval') {
    try {
      blame = { blame: blameEvalOf(store, e.id, defaultTools()) };
    } catch (err) {
      blame = { blameProblem: errorMessage(err) };
    }
  }
  return {
    id: e.id, kind: e.kind, workflowName: e.workflowName, dataset: e.dataset, split: e.split, seed: e.seed, models: modelsOf(e.config),
    status: e.status, createdAt: e.createdAt, ...(e.finishedAt !== undefined && { finishedAt: e.finishedAt }), report, ...blame,
  };
}

/** The printed summary. */
export function formatExperimentSummary(s: ExperimentShow): string {
  const kind = s.kind === 'blame-eval' ? 'blame-eval (SIMULATED faults)' : s.kind;
  const title = [
    `Experiment ${s.id}  ${kind}  workflow ${s.workflowName}  dataset ${s.dataset}/${s.split}  seed ${s.seed}`,
    `models ${s.models.join(', ') || '-'}  created ${new Date(s.createdAt).toISOString()}${s.finishedAt !== undefined ? `  finished ${new Date(s.finishedAt).toISOString()}` : ''}`,
  ].join('\n');
  let blame = s.blameProblem ? `Blame evaluation not scored: ${s.blameProblem}\n` : '';
  if (s.blame) {
    const { experimentId: _id, simulated: _simulated, inject, ...report } = s.blame;
    blame = formatBlame(report, s.id, inject, s.report.accuracy);
  }
  return `${formatReport(s.report, title)}${blame}Runs: flowlab ls ${s.id} [--wrong] [--blamed <role>] [--search <words>]; one run: flowlab show <run-id>\n`;
}
