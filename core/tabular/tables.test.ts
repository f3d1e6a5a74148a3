import { beforeAll, describe, expect, it } from 'vitest';
import { seedTeamExperiment, TEAM_TASKS } from '../otel/otel.fixture.ts';
import { openStore, type SqliteStore } from '../store/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import type { RunRecord } from '../results/index.ts';
import { MODEL_CALL_COLUMNS, NODE_EVENT_COLUMNS, RUN_COLUMNS, toCsv, toJsonl, traceTables } from './index.ts';

/** An RFC 4180 reader (section 2), written apart from the writer: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let f = '';
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (q) {
      if (ch === '"' && text[i + 1] === '"') (f += '"'), i++;
      else if (ch === '"') q = false;
      else f += ch;
    } else if (ch === '"') q = true;
    else if (ch === ',') row.push(f), (f = '');
    else if (ch === '\r' && text[i + 1] === '\n') row.push(f), rows.push(row), (row = []), (f = ''), i++;
    else f += ch;
  }
  if (f || row.length) throw new Error('the last record has no CRLF');
  return rows;
}

let store: SqliteStore;
let runs: Array<{ run: RunRecord; events: NodeEvent[] }>;
beforeAll(async () => {
  store = openStore(':memory:');
  const id = await seedTeamExperiment(store);
  runs = store.listRuns(id).map((run) => ({ run, events: store.getRunEvents(run.runId) }));
});

describe('runs, node events and model calls as tables', () => {
  it('one row per run, per node run and per model call, joined on run_id', () => {
    const t = traceTables(runs);
    const events = runs.flatMap((r) => r.events);
    expect(t.runs).toHaveLength(TEAM_TASKS);
    expect(t.node_events).toHaveLength(events.length);
    expect(t.model_calls).toHaveLength(events.reduce((n, e) => n + e.calls.length, 0));
    expect(t.runs[2]).toMatchObject({ run_id: runs[2]!.run.runId, status: 'failed', root_failures: 1, cascades: 2, blamed: ['solver'], correct: false });
    expect(t.node_events.find((r) => r['run_id'] === runs[2]!.run.runId && r['node_id'] === 'calculate')).toMatchObject({ kind: 'tool', status: 'failed', failure_class: 'execution', error_code: 'TOOL_ERROR', calls: 0, inputs: { expression: '1/0' } });
  });

  it('CSV reads back cell for cell with an RFC 4180 reader (prompts with line breaks and quotes included)', () => {
    const t = traceTables(runs);
    const csv = toCsv(t.model_calls, MODEL_CALL_COLUMNS);
    const rows = parseCsv(csv);
    expect(rows[0]).toEqual([...MODEL_CALL_COLUMNS]);
    expect(rows).toHaveLength(t.model_calls.length + 1);
    const at = (name: string) => MODEL_CALL_COLUMNS.indexOf(name as (typeof MODEL_CALL_COLUMNS)[number]);
    rows.slice(1).forEach((r, i) => {
      const m = t.model_calls[i]!;
      expect(r[at('prompt')]).toBe(m['prompt']);
      expect(r[at('completion')]).toBe(m['completion']);
      expect(JSON.parse(r[at('params')]!)).toEqual(m['params']);
      expect(Number(r[at('prompt_tokens')])).toBe(m['prompt_tokens']);
    });
    expect(t.model_calls.some((m) => String(m['prompt']).includes('\n')) && t.model_calls.some((m) => String(m['completion']).includes('"'))).toBe(true);
    const ev = parseCsv(toCsv(t.node_events, NODE_EVENT_COLUMNS));
    const out = NODE_EVENT_COLUMNS.indexOf('output');
    ev.slice(1).forEach((r, i) => expect(r[out] === '' ? undefined : JSON.parse(r[out]!)).toEqual(t.node_events[i]!['output']));
    expect(parseCsv(toCsv(t.runs, RUN_COLUMNS))[1]!.slice(0, 5)).toEqual([runs[0]!.run.runId, runs[0]!.run.experimentId, '0', 'otel/0', 'completed']);
  });

  it('JSON lines: one object per row, the stored values as they are', () => {
    const t = traceTables(runs);
    const lines = toJsonl(t.node_events, NODE_EVENT_COLUMNS).trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(t.node_events.length);
    expect(lines[0]).toEqual(JSON.parse(JSON.stringify(t.node_events[0])));
    expect(Object.keys(lines[0])).toEqual(NODE_EVENT_COLUMNS.filter((c) => t.node_events[0]![c] !== undefined));
    expect(toJsonl([], RUN_COLUMNS)).toBe('');
  });
});
