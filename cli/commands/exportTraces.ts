/**
 * The trace half of `flowlab export`: an experiment's runs (or one run) as OTLP/JSON, sent by
 * OTLP/HTTP, or as CSV / JSON-lines tables. Loaded by export.ts only for these formats, so the
 * TRL export never loads the OpenTelemetry SDK.
 */
import { outFile, outFolder } from '../outPath.ts';
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { otlpJsonOf, runSpans, storedRuns } from '../../core/otel/index.ts';
import { openStore } from '../../core/store/index.ts';
import { ANNOTATION_COLUMNS, annotationRows, MODEL_CALL_COLUMNS, NODE_EVENT_COLUMNS, RUN_COLUMNS, toCsv, toJsonl, traceTables } from '../../core/tabular/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { UsageError } from '../args.ts';
import type { Io } from '../io.ts';
import { defaultTracesEndpoint, sendOtlpHttp } from '../otlpHttp.ts';

export interface TraceExportFlags {
  format: 'otlp-json' | 'otlp-http' | 'csv' | 'jsonl';
  out?: string;
  db: string;
  json?: boolean;
  endpoint?: string;
  header?: string[];
  withContent?: boolean;
}

/** Writes `text` to `file` through a temporary file, so a reader never sees half of it. */
function writeAtomic(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

/** `flowlab export <experiment-or-run-id> --format otlp-json|otlp-http|csv|jsonl`. Returns the exit status. */
export async function exportTraces(id: string, values: TraceExportFlags, io: Io): Promise<number> {
  if (values.format !== 'otlp-http' && values.out === undefined) throw new UsageError(`missing --out ${values.format === 'otlp-json' ? '<file.json>' : '<dir>'}`);
  const headers: Record<string, string> = {};
  for (const h of values.header ?? []) {
    const i = h.indexOf('=');
    if (i <= 0) throw new UsageError(`--header takes name=value, got "${h}"`);
    headers[h.slice(0, i).trim()] = h.slice(i + 1);
  }
  if (values.format !== 'otlp-http' && (values.endpoint !== undefined || values.header?.length)) throw new UsageError('--endpoint and --header go with --format otlp-http');
  const store = openStore(values.db, { mustExist: true });
  let report: Record<string, unknown>;
  let line: string;
  try {
    const { experiment, runs } = storedRuns(store, id, defaultTools());
    const what = `${runs.length} run${runs.length === 1 ? '' : 's'} of ${experiment.id}`;
    if (values.format === 'csv' || values.format === 'jsonl') {
      const dir = outFolder(values.out!);
      const t = traceTables(runs);
      const ext = values.format;
      const write = (name: string, rows: typeof t.runs, columns: readonly string[]) => writeAtomic(path.join(dir, `${name}.${ext}`), ext === 'csv' ? toCsv(rows, columns) : toJsonl(rows, columns));
      write('runs', t.runs, RUN_COLUMNS);
      write('node_events', t.node_events, NODE_EVENT_COLUMNS);
      write('model_calls', t.model_calls, MODEL_CALL_COLUMNS);
      const notes = annotationRows(runs.flatMap((r) => (r.annotations ?? []).map((a) => ({ ...a, runId: r.run.runId, experimentId: experiment.id }))));
      write('annotations', notes, ANNOTATION_COLUMNS);
      report = { format: ext, dir, experimentId: experiment.id, runs: t.runs.length, nodeEvents: t.node_events.length, modelCalls: t.model_calls.length, annotations: notes.length, files: ['runs', 'node_events', 'model_calls', 'annotations'].map((n) => `${n}.${ext}`) };
      line = `Exported ${what} as ${ext.toUpperCase()} to ${dir}: runs.${ext} (${t.runs.length} rows), node_events.${ext} (${t.node_events.length}), model_calls.${ext} (${t.model_calls.length}), annotations.${ext} (${notes.length})`;
    } else {
      const spans = runSpans(experiment, runs, { withContent: values.withContent === true });
      const content = values.withContent ? 'with content' : 'no content (--with-content adds prompts, completions, inputs, outputs)';
      if (values.format === 'otlp-json') {
        const file = outFile(values.out!);
        writeAtomic(file, otlpJsonOf(spans));
        const annotations = runs.reduce((n, r) => n + (r.annotations?.length ?? 0), 0);
        report = { format: 'otlp-json', file, experimentId: experiment.id, runs: runs.length, spans: spans.length, annotations, content: values.withContent === true };
        line = `Exported ${what} as OTLP/JSON to ${file}: ${spans.length} spans in ${runs.length} traces, ${annotations} annotation${annotations === 1 ? '' : 's'} as span events, ${content}`;
      } else {
        const url = values.endpoint ?? defaultTracesEndpoint();
        const { requests } = await sendOtlpHttp(spans, { url, headers });
        report = { format: 'otlp-http', url, experimentId: experiment.id, runs: runs.length, spans: spans.length, requests, content: values.withContent === true };
        line = `Sent ${what} by OTLP/HTTP to ${url}: ${spans.length} spans in ${runs.length} traces, ${requests} request${requests === 1 ? '' : 's'}, ${content}`;
      }
    }
  } finally {
    store.close();
  }
  io.stdout(values.json ? JSON.stringify(report) + '\n' : line + '\n');
  return 0;
}
