import { readFileSync } from 'node:fs';
import { decodeUtf8, utf8FaultMessage } from '../../core/utf8.ts';
import path from 'node:path';
import type { Command } from 'commander';
import { importRuns, readOtlpTraces } from '../../core/otel/index.ts';
import { openStore } from '../../core/store/index.ts';
import { act, dbOption, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { Io } from '../io.ts';

interface ImportFlags {
  db: string;
  experiment?: string;
  json?: boolean;
}

/** `flowlab import <file.json>`: OTLP/JSON traces into the store as an experiment of kind `import`, each trace a run scored by structural credit. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<file.json> [--db file] [--experiment id] [--json]')
    .description([
      'Reads OTLP/JSON traces (one ExportTraceServiceRequest, an array of them, or JSON lines of them, as',
      "a collector's file exporter writes) and stores each trace as a run of a new experiment of kind",
      'import, scored by structural credit: root failures, cascades and blame per role (docs/otel.md).',
      "Flowlab's own exports (flowlab export --format otlp-json) come back losslessly; other frameworks'",
      'traces (OpenTelemetry GenAI, OpenInference: LangGraph, OpenAI Agents SDK, ...) are mapped:',
      'agent and tool spans -> nodes, parent and sibling links -> edges, errors -> failures,',
      'gen_ai.agent.name -> role. `flowlab show <run-id>` prints an imported run.',
    ].join('\n'))
    .argument('<file.json>', 'the OTLP/JSON trace file')
    .addOption(dbOption())
    .option('--experiment <id>', 'the new experiment\'s id (default: a fresh one)')
    .option('--json', 'print the experiment id and each run\'s credit as JSON')
    .action(act(ctx, (file: string, o: ImportFlags) => importCommand(file, o, ctx.io)));
}

async function importCommand(file: string, values: ImportFlags, io: Io): Promise<number> {
  let text: string;
  try {
    const decoded = decodeUtf8(readFileSync(file));
    if ('fault' in decoded) throw new CommandError('BAD_FILE', utf8FaultMessage(file, decoded.fault));
    text = decoded.text;
  } catch (e) {
    if (e instanceof CommandError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new CommandError(code === 'ENOENT' ? 'NOT_FOUND' : 'BAD_FILE', `${file}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  const traces = readOtlpTraces(text, file, (w) => io.stderr(`flowlab import: warning: ${w}\n`));
  const store = openStore(values.db);
  try {
    const res = importRuns(store, traces, { experimentId: values.experiment, file: path.resolve(file) });
    if (values.json) {
      io.stdout(JSON.stringify({ experimentId: res.experimentId, runs: res.runs.map((r, i) => ({ runId: r.runId, traceId: traces[i]!.traceId, producer: traces[i]!.producer, status: r.status, nodes: traces[i]!.graph.nodes.length, edges: traces[i]!.graph.edges.length, credit: r.credit })) }) + '\n');
      return 0;
    }
    const spans = traces.reduce((n, t) => n + t.spans, 0);
    const lines = [`Imported ${traces.length} trace${traces.length === 1 ? '' : 's'} (${spans} spans) from ${file} as experiment ${res.experimentId} (kind import) in ${store.file}:`];
    for (const [i, r] of res.runs.entries()) {
      const t = traces[i]!;
      const c = r.credit!;
      const roots = c.roots.map((x) => `${x.nodeId} (${x.failureClass}${x.errorCode ? ' ' + x.errorCode : ''}) -> ${x.blamed ?? (x.candidates ? `ambiguous: ${x.candidates.join(' | ')}` : 'no role')}`);
      lines.push(`  ${r.runId}  ${t.producer}  ${t.workflowName}  ${r.status}  ${t.graph.nodes.length} nodes, ${t.graph.edges.length} edges  root failures: ${roots.join('; ') || 'none'}${c.cascades.length ? `  cascades: ${c.cascades.map((x) => x.nodeId).join(', ')}` : ''}`);
    }
    lines.push(`Show a run's trace with its blame: flowlab show <run-id> --db ${store.file}`);
    io.stdout(lines.join('\n') + '\n');
    return 0;
  } finally {
    store.close();
  }
}
