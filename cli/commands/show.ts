import Table from 'cli-table3';
import type { Command } from 'commander';
import { openStore } from '../../core/store/index.ts';
import type { CreditResult } from '../../core/blame/index.ts';
import { outputFlags, type RoleLadder } from '../../core/reward/index.ts';
import type { NodeEvent } from '../../core/trace/index.ts';
import type { RunRecord } from '../../core/results/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { parseWorkflow, type Graph } from '../../core/workflow/index.ts';
import { act, dbOption, type CommandContext } from '../args.ts';
import type { Io } from '../io.ts';

/** `flowlab show <run-id>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<run-or-experiment-id> [--db file] [--json]')
    .description([
      "Prints one run's trace as a tree (each node under the node it depends on), with root failures,",
      'their blamed role and the cascades below them marked, then the reward ladder per role.',
      'Run ids look like <experiment-id>/<task-index>. Given an experiment id, prints the experiment\'s summary:',
      'what it ran, its grades, failures by class, root failures blamed per role and the mean ladder per role.',
    ].join('\n'))
    .argument('<run-or-experiment-id>', 'the run (or experiment) to print')
    .addOption(dbOption())
    .option('--json', 'print the run and its events as one JSON object')
    .action(act(ctx, (id: string, o: { db: string; json?: boolean }) => showCommand(id, o, ctx.io)));
}

async function showCommand(runId: string, values: { db: string; json?: boolean }, io: Io): Promise<number> {
  const store = openStore(values.db, { mustExist: true });
  try {
    // An experiment id prints the experiment's summary (a run id is never an experiment id).
    const asExperiment = store.findExperiment(runId);
    if (asExperiment) {
      const { experimentSummary, formatExperimentSummary } = await import('./showExperiment.ts');
      const summary = experimentSummary(store, asExperiment.id);
      io.stdout(values.json ? JSON.stringify(summary) + '\n' : formatExperimentSummary(summary));
      return 0;
    }
    const run = store.getRun(runId);
    const events = store.getRunEvents(run.runId);
    const exp = store.getExperiment(run.experimentId);
    // An imported run is drawn on the graph it was imported with (it may have no workflow text).
    const otel = exp.kind === 'import' ? await import('../../core/otel/index.ts') : undefined;
    const imported = otel?.importedGraphOf(exp.config, run.runId);
    const graded = otel?.importedRunGraded(exp.config, run.runId) ?? true;
    const graph = imported ? { nodes: imported.nodes, edges: imported.edges.map((e) => (e.loop ? { ...e, maxIterations: 1 } : e)) } : parseWorkflow(exp.workflowYaml, { tools: defaultTools() }).graph;
    const fork = store.forks.linkOf(run.runId);
    const forks = store.forks.forksOf(run.runId);
    if (values.json) io.stdout(JSON.stringify({ run, events, ...(graded ? {} : { graded: false }), ...(fork && { forkOf: fork }), ...(forks.length && { forks: forks.map((f) => f.runId) }) }) + '\n');
    else {
      if (fork) io.stdout(`Fork of ${fork.parentRunId} at ${fork.nodeId}#${fork.attempt} (${String(fork.intervention.kind)} intervention); flowlab diff ${fork.parentRunId} ${run.runId}\n`);
      io.stdout(formatRun(run, events, graph, { graded }));
      if (forks.length) io.stdout(`Forks of this run: ${forks.map((f) => `${f.runId} (at ${f.nodeId}#${f.attempt}, ${String(f.intervention.kind)})`).join(', ')}\n`);
    }
    return 0;
  } finally {
    store.close();
  }
}

/** The parts of a graph the tree reads: node ids, and edges (loop edges have `maxIterations`). */
type TreeGraph = { nodes: ReadonlyArray<Pick<Graph['nodes'][number], 'id'>>; edges: ReadonlyArray<Pick<Graph['edges'][number], 'from' | 'to' | 'maxIterations'>> };

/**
 * The run as a dependency tree with credit marks, then its ladder. `opts.graded: false` (an
 * imported trace that carried no expected answer, core/otel `importedRunGraded`): the grade reads
 * `ungraded` instead of the stored `correct`, which is then no verdict.
 */
export function formatRun(run: RunRecord, events: readonly NodeEvent[], graph: TreeGraph, opts: { graded?: boolean } = {}): string {
  const credit = run.credit;
  const lines: string[] = [];
  const grade = opts.graded === false ? 'ungraded (no expected answer)' : run.correct ? 'correct' : 'wrong';
  lines.push(`Run ${run.runId}  task ${run.taskId}  ${run.status}  answer ${run.answer ?? '-'}  expected ${run.expected ?? '-'}  ${grade}${run.simulated ? '  [SIMULATED faults injected]' : ''}`);
  // Parent of each node in the tree: its first forward predecessor in document order.
  const parent = new Map<string, string>();
  for (const n of graph.nodes) {
    const e = graph.edges.find((x) => x.to === n.id && !x.maxIterations);
    if (e) parent.set(n.id, e.from);
  }
  const children = new Map<string, string[]>();
  for (const n of graph.nodes) {
    const p = parent.get(n.id) ?? '';
    children.set(p, [...(children.get(p) ?? []), n.id]);
  }
  const byNode = new Map<string, NodeEvent[]>();
  for (const e of events) byNode.set(e.nodeId, [...(byNode.get(e.nodeId) ?? []), e]);
  const walk = (id: string, prefix: string, last: boolean, top: boolean) => {
    const branch = top ? '' : last ? '└─ ' : '├─ ';
    for (const [i, e] of (byNode.get(id) ?? []).entries()) {
      const head = i === 0 ? prefix + branch : prefix + (top ? '' : last ? '   ' : '│  ');
      lines.push(`${head}${describe(e, credit)}`);
    }
    if (!byNode.has(id)) lines.push(`${prefix}${branch}· ${id}  (not run)`);
    const kids = children.get(id) ?? [];
    kids.forEach((k, j) => walk(k, prefix + (top ? '' : last ? '   ' : '│  '), j === kids.length - 1, false));
  };
  const roots = children.get('') ?? [];
  roots.forEach((r) => walk(r, '', true, true));
  if (credit) {
    lines.push('');
    lines.push(`Root failures: ${credit.roots.length ? credit.roots.map((r) => `${r.nodeId} (${r.failureClass}${r.errorCode ? ' ' + r.errorCode : ''}) -> ${r.blamed ?? (r.candidates ? `ambiguous: ${r.candidates.join(' | ')}` : 'no role (infrastructure)')}`).join('; ') : 'none'}`);
    lines.push(`Cascades (not blamed): ${credit.cascades.length ? credit.cascades.map((c) => `${c.nodeId} <- ${c.roots.join(', ')}`).join('; ') : 'none'}`);
    if (credit.silent) lines.push('SILENT: no node failed but the answer is wrong; structural credit cannot see this, only the correctness rung carries it.');
  }
  if (run.ladder) lines.push('', formatRunLadder(run.ladder, credit));
  return lines.join('\n') + '\n';
}

function describe(e: NodeEvent, credit?: CreditResult): string {
  const root = credit?.roots.find((r) => r.nodeId === e.nodeId);
  const cascade = credit?.cascades.find((c) => c.nodeId === e.nodeId);
  const who = `${e.nodeId}#${e.attempt} [${e.kind}${e.role ? ' ' + e.role : ''}]`;
  const sim = e.simulated ? `  [SIMULATED ${e.fault ?? 'fault'}]` : '';
  const tokens = e.calls.length ? `  ${e.calls.reduce((s, c) => s + c.promptTokens, 0)}+${e.calls.reduce((s, c) => s + c.completionTokens, 0)} tok` : '';
  const ms = `  ${e.endedAt - e.startedAt} ms`;
  const flags = outputFlags(e);
  const thought = e.calls.some((c) => c.thinking !== undefined) ? '  [thinking kept apart]' : '';
  const marks = `${flags.repaired ? `  [REPAIRED: JSON taken from ${e.calls.at(-1)!.repair === 'fenced' ? 'a fenced block' : 'prose'}]` : ''}${flags.cut ? `  [CUT at max_tokens]` : ''}${thought}`;
  switch (e.status) {
    case 'ok':
      return `✓ ${who} ok${flags.cut ? ' (cut at max_tokens)' : ''}  -> ${clip(JSON.stringify(e.output) ?? '(no output recorded)')}${tokens}${ms}${marks}${sim}`;
    case 'skipped':
      return `- ${who} skipped: ${e.message ?? ''}`;
    case 'cascade':
      return `↓ ${who} CASCADE of ${cascade?.roots.join(', ') ?? e.causes?.join(', ') ?? '?'} (not blamed)`;
    case 'failed': {
      const blame = root ? (root.blamed ? `blamed: ${root.blamed}` : root.candidates ? `ambiguous: ${root.candidates.join(' | ')}` : 'no role: infrastructure') : cascade ? `cascade of ${cascade.roots.join(', ')}` : 'superseded';
      return `✗ ${who} ${root ? 'ROOT FAILURE' : 'failed'} ${e.failureClass}/${e.errorCode}: ${clip(e.message ?? '')}  (${blame})${tokens}${ms}${marks}${sim}`;
    }
    default:
      return e.status satisfies never;
  }
}

function formatRunLadder(ladder: Record<string, RoleLadder>, credit?: CreditResult): string {
  const t = new Table({ head: ['role', 'f', 'v', 'e', 'a', 'c', 'h', 'rung', 'F/V', 'weights f/v/e/a/c'], style: { head: [], border: [], compact: true } });
  for (const [role, l] of Object.entries(ladder)) {
    const rc = credit?.byRole[role];
    const w = l.weights;
    t.push([role, l.format.toFixed(2) + (l.repaired ? ` (${l.repaired} repaired)` : '') + (l.cut ? ` (${l.cut} cut)` : ''), l.validity.toFixed(2), l.completion.toFixed(2), l.correctness.toFixed(2), l.credit.toFixed(2), l.reward.toFixed(3), `${l.highestRung}/5`, rc ? `${rc.rootFailures.length}/${rc.authored.length}` : '-', `${w.format}/${w.validity}/${w.completion}/${w.correctness}/${w.credit}`]);
  }
  return `Reward ladder (h = wf*f + wv*v + we*e + wa*a + wc*c; rungs 1 format, 2 validity, 3 completion, 4 correctness, 5 credit)\n${t.toString()}`;
}

const clip = (s: string, n = 80) => (s.length > n ? s.slice(0, n) + '…' : s);
