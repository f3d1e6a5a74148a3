import type { Command } from 'commander';
import { runGraphOf } from '../../core/design/index.ts';
import { replayHintsFor } from '../../core/distill/index.ts';
import { replayDesignFaultsFor, replayRun } from '../../core/experiments/index.ts';
import { importedRunGraded } from '../../core/otel/index.ts';
import type { RunRecord } from '../../core/results/index.ts';
import { openStore, StoreError, type ExperimentRow, type Store } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { diffRuns, type DiffGraph, type NodeEvent } from '../../core/trace/index.ts';
import { formatIssue, parseWorkflow, SpecError, type Graph } from '../../core/workflow/index.ts';
import { ReplayProvider } from '../../models/replay/index.ts';
import { act, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import { formatRunDiff, runDiffJson, type DiffedRun, type RunDiffReport } from '../formatDiff.ts';
import type { Io } from '../io.ts';
import { errorMessage } from '../../core/errors.ts';

interface DiffFlags {
  db: string;
  json?: boolean;
  replay?: boolean;
  task?: number;
  force?: boolean;
}

/** `flowlab diff <run-a> [run-b]`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<run-a> <run-b> [--db file] [--json] | <run-a> --replay')
    .description([
      'Aligns two runs of one workflow node run by node run (node id and attempt) and names the first',
      'diverging node and what diverged first in it: input, prompt, sampling (seed), sampled text,',
      'output (tool result) or status. Nodes are ordered by causal depth, then topological rank, then',
      'attempt (see core/trace/diff.ts). Run ids look like <experiment-id>/<task-index>; an experiment',
      'id with --task <i> names its run of task i. --replay compares a run with its replay from its',
      'recorded calls (no model is loaded, nothing is stored). Exits 0 whether or not the runs differ.',
    ].join('\n'))
    .argument('<run-a>', 'the first run (A)')
    .argument('[run-b]', 'the run compared with A')
    .addOption(dbOption())
    .addOption(intOption('--task <i>', 'for an experiment id given instead of a run id: its run of this task index'))
    .option('--replay', 'compare run A with its replay from recorded calls instead of with run B')
    .option('--force', 'compare runs of differently named workflows (aligned by node id)')
    .option('--json', 'print one JSON object')
    .action(act(ctx, (a: string, b: string | undefined, o: DiffFlags) => diffCommand(a, b, o, ctx.io)));
}

async function diffCommand(aId: string, bId: string | undefined, flags: DiffFlags, io: Io): Promise<number> {
  if (flags.replay && bId !== undefined) throw new UsageError('give either <run-b> or --replay, not both');
  if (!flags.replay && bId === undefined) throw new UsageError('missing <run-b> (or --replay to compare run A with its replay)');
  const store = openStore(flags.db, { mustExist: true });
  try {
    const tools = defaultTools();
    const a = loadSide(store, resolveRun(store, aId, flags.task), tools);
    let b: Side;
    if (flags.replay) b = await replaySide(store, a, tools);
    else b = loadSide(store, resolveRun(store, bId!, flags.task), tools);
    const notes: string[] = [...new Set([a.problem, b.problem].filter((p): p is string => !!p))];
    if (a.exp.workflowHash !== b.exp.workflowHash) {
      if (a.exp.workflowName !== b.exp.workflowName && !flags.force) {
        throw new CommandError(
          'DIFFERENT_WORKFLOWS',
          `${a.run.runId} ran workflow "${a.exp.workflowName}" and ${b.run.runId} ran "${b.exp.workflowName}": a diff aligns runs of one workflow; add --force to align them by node id anyway`,
        );
      }
      const which = a.exp.workflowName === b.exp.workflowName ? `two texts of workflow "${a.exp.workflowName}"` : `different workflows ("${a.exp.workflowName}" and "${b.exp.workflowName}", --force)`;
      const note = `the runs ran ${which} (sha256 ${a.exp.workflowHash.slice(0, 12)} vs ${b.exp.workflowHash.slice(0, 12)}); nodes are aligned by id`;
      notes.push(note);
    }
    if (!flags.json) for (const n of notes) io.stderr(`flowlab diff: note: ${n}\n`);
    const diff = diffRuns({ events: a.events, ...(a.graph ? { graph: a.graph } : {}) }, { events: b.events, ...(b.graph ? { graph: b.graph } : {}) });
    const report: RunDiffReport = { a: summary(a), b: summary(b), replay: !!flags.replay, sameWorkflow: a.exp.workflowHash === b.exp.workflowHash, notes, diff, greedy: allGreedy(a.events) && allGreedy(b.events) };
    io.stdout(flags.json ? runDiffJson(report) : formatRunDiff(report));
    return 0;
  } finally {
    store.close();
  }
}

interface Side {
  run: RunRecord;
  exp: ExperimentRow;
  events: NodeEvent[];
  base?: Graph;
  graph?: DiffGraph;
  problem?: string;
  label: string;
  /** A replayed side: how the replay ended (the recorded run's grade does not apply to it). */
  replayed?: { status: RunRecord['status']; answer?: string };
}

/**
 * The run an argument names: a run id; an experiment id with `--task`; else a NOT_FOUND that says
 * what the id is and which runs there are. Errors: CommandError `NOT_FOUND`.
 */
export function resolveRun(store: Store, id: string, task: number | undefined): RunRecord {
  try {
    return store.getRun(id);
  } catch (err) {
    if (!(err instanceof StoreError) || err.code !== 'NOT_FOUND') throw err;
  }
  const exp = store.findExperiment(id);
  if (exp) {
    const runs = store.listRuns(exp.id);
    if (task !== undefined) {
      const run = runs.find((r) => r.taskIndex === task);
      if (run) return run;
      throw new CommandError('NOT_FOUND', `experiment ${exp.id} has no stored run of task ${task} (${storedTasks(runs)})`);
    }
    throw new CommandError('NOT_FOUND', `"${id}" is an experiment, not a run: name one of its runs as ${exp.id}/<task-index>, or add --task <i> (${storedTasks(runs)})`);
  }
  const m = /^(.+)\/(\d+)$/.exec(id);
  const parent = m ? store.findExperiment(m[1]!) : undefined;
  if (parent) throw new CommandError('NOT_FOUND', `experiment ${parent.id} has no stored run of task ${m![2]} (${storedTasks(store.listRuns(parent.id))})`);
  throw new CommandError('NOT_FOUND', `no run or experiment "${id}" in ${store.file}`);
}

function storedTasks(runs: readonly RunRecord[]): string {
  if (!runs.length) return 'it has no stored runs';
  const idx = runs.map((r) => r.taskIndex);
  return `runs stored for task${idx.length > 1 ? 's' : ''} ${idx.length > 8 ? `${idx.slice(0, 8).join(', ')}, … (${idx.length} in all)` : idx.join(', ')}`;
}

/** The note of an imported run that carries no workflow text (core/otel importRuns): nothing to compile. */
const importedNote = (runId: string) => `${runId} is an imported run: ordered by completion (no workflow)`;

function compile(exp: ExperimentRow, tools: ReturnType<typeof defaultTools>, runId: string): { base?: Graph; problem?: string } {
  if (exp.kind === 'import' && !exp.workflowYaml.trim()) return { problem: importedNote(runId) };
  try {
    return { base: parseWorkflow(exp.workflowYaml, { tools }).graph };
  } catch (err) {
    const why = err instanceof SpecError ? err.issues.map(formatIssue).join('; ') : errorMessage(err);
    return { problem: `the workflow of ${exp.id} does not compile here (${why}); its nodes are ordered by completion only` };
  }
}

function loadSide(store: Store, run: RunRecord, tools: ReturnType<typeof defaultTools>): Side {
  const exp = store.getExperiment(run.experimentId);
  const events = store.getRunEvents(run.runId);
  const { base, problem } = compile(exp, tools, run.runId);
  return { run, exp, events, ...(base ? { base, graph: runGraphOf(base, events, { tools }) } : {}), ...(problem ? { problem } : {}), label: run.runId };
}

/** Run A replayed from its experiment's recorded calls (core/experiments replayRun), as side B. */
async function replaySide(store: Store, a: Side, tools: ReturnType<typeof defaultTools>): Promise<Side> {
  if (!a.base && a.exp.kind === 'import') {
    throw new CommandError('WRONG_KIND', `cannot replay ${a.run.runId}: an imported run has no workflow to replay (diff it with another run instead)`);
  }
  if (!a.base) throw new CommandError('BAD_FILE', `cannot replay ${a.run.runId}: ${a.problem}`);
  const provider = new ReplayProvider(store.getExperimentCalls(a.exp.id));
  const outcome = await replayRun({
    store, experimentId: a.exp.id, graph: a.base, provider, tools, run: a.run,
    hints: replayHintsFor(store, a.exp, a.base), designFault: replayDesignFaultsFor(a.exp, a.base, tools),
  });
  const answer = outcome.answer === undefined ? undefined : typeof outcome.answer === 'string' ? outcome.answer : JSON.stringify(outcome.answer);
  return { run: a.run, exp: a.exp, events: outcome.events, base: a.base, graph: outcome.graph, label: `${a.run.runId} (replayed)`, replayed: { status: outcome.status, ...(answer === undefined ? {} : { answer }) } };
}

function summary(s: Side): DiffedRun {
  const base = { runId: s.label, experimentId: s.exp.id, workflow: s.exp.workflowName, taskIndex: s.run.taskIndex, taskId: s.run.taskId, seed: s.run.seed };
  if (s.replayed) return { ...base, ...s.replayed };
  const graded = s.exp.kind !== 'import' || importedRunGraded(s.exp.config, s.run.runId) !== false;
  return { ...base, status: s.run.status, ...(s.run.answer === undefined ? {} : { answer: s.run.answer }), ...(graded ? { correct: s.run.correct } : {}) };
}

/** Every model call of the run decoded greedily (temperature 0: the seed changes nothing). */
function allGreedy(events: readonly NodeEvent[]): boolean {
  const calls = events.flatMap((e) => e.calls);
  return calls.length > 0 && calls.every((c) => c.params.temperature === 0);
}
