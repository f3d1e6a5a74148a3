/**
 * MASS steps in flight keep the records independent of timing (issue 26 with issue 24's rule,
 * core/mass/inFlight.ts): `rank` and `rsi` at parallel 1 and 8, on a SIMULATED model whose
 * replies come after a delay that depends on the call (so calls finish in another order than
 * they started), store the same rows — the steps' experiments, runs, node events and model
 * calls in the same row order, the loop's mass records in the same order, the same weight
 * versions — and write the same exports, version files and guard records; and at parallel 8
 * several calls are in flight at once.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/index.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import type { SftSequence } from '../training/port.ts';
import { massFamily } from './family.ts';
import { evolve } from './inner.ts';
import { FIRST_DESIGNS } from './family.ts';
import { parseMassDesign } from './design.ts';
import { runRank } from './rank.ts';
import { runRsi, type RsiOptions } from './rsi.ts';
import { delayed, fakeTrainer, flight, scripted } from './rsi.fixture.ts';
import type { OuterOptions } from './outer.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import { defaultTools } from '../tools/index.ts';

const family = massFamily('learn-tool');
const ds = createLearnDataset('learn-tool', ['tool']);
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'mass-parallel-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const TIMING = new Set(['created_at', 'updated_at', 'finished_at', 'started_at', 'ended_at', 'ms', 'pid', 'startedAt', 'endedAt', 'seconds', 'wallSeconds']);
/** A value without its clock readings, with `dir` written as `<dir>` (each run has its own folder). */
function untimed(v: unknown, dir: string): unknown {
  const strip = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(strip);
    if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).filter(([k]) => !TIMING.has(k)).map(([k, y]) => [k, strip(y)]));
    return typeof x === 'string' ? x.split(dir).join('<dir>') : x;
  };
  return strip(v);
}

/** Every stored row a loop wrote, table by table in row order, without clock readings. */
function rowsOf(db: string, dir: string) {
  const raw = new Database(db, { readonly: true });
  try {
    // JSON columns are read as values, so a clock reading inside one (an SFT's seconds) is left out too.
    const parsed = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, (k === 'json' || k.endsWith('_json')) && typeof v === 'string' ? JSON.parse(v) : v]));
    const all = (sql: string) => untimed((raw.prepare(sql).all() as Array<Record<string, unknown>>).map(parsed), dir) as unknown[];
    return {
      experiments: all('SELECT * FROM experiments ORDER BY rowid'),
      tasks: all('SELECT * FROM experiment_tasks ORDER BY experiment_id, task_index'),
      runs: all('SELECT * FROM runs ORDER BY rowid'),
      events: all('SELECT * FROM node_events ORDER BY rowid'),
      calls: all('SELECT * FROM model_calls ORDER BY rowid'),
      mass: all('SELECT evolution_id, kind, key, task_index, seq, json FROM mass_records ORDER BY evolution_id, seq'),
      versions: all('SELECT * FROM weight_versions ORDER BY rowid'),
    };
  } finally {
    raw.close();
  }
}

/** Every file under `root` (exports, manifests, version files, guard records, state) by relative path; a JSON file as its value without clock readings, any other as its text. */
function filesOf(root: string, dir: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const text = readFileSync(p, 'utf8').split(dir).join('<dir>');
        out[path.relative(root, p)] = name.endsWith('.json') ? untimed(JSON.parse(text), dir) : text;
      }
    }
  };
  walk(root);
  return out;
}

const outer = (prefix: string): OuterOptions => ({ prefix, design: null, runs: 6, neighbours: 3, seed: 1, iterations: 500, train: 4, validation: 1, verifierMin: 1, sampling: { temperature: 1 } });

describe('MASS steps in flight (SIMULATED model, delayed replies)', () => {
  async function rankAt(parallel: number) {
    const dir = tmp();
    const db = path.join(dir, 'f.db');
    const store = openStore(db);
    const f = flight();
    let res;
    try {
      res = await runRank({ store, provider: delayed(scripted(''), f), family, tasks: ds.load({ split: 'train', limit: 2 }), parallel }, {
        ...outer('rank-p'), tamperer: { mode: 'expectation', share: 0.5 }, outDir: path.join(dir, 'out'), thresholds: { maxQuarantinedShare: 1, minAgreement: 0 }, allowUnreliableJudge: true,
      });
    } finally {
      store.close();
    }
    const result = untimed(JSON.parse(JSON.stringify({ ...res, rankings: res.rankings.map(({ workspaces: _w, ...r }) => r) })), dir);
    return { f, result, rows: rowsOf(db, dir), files: filesOf(path.join(dir, 'out'), dir) };
  }

  it('rank at parallel 1 and 8: the same rows in the same order, the same exports; 8 keeps several calls in flight', { timeout: 120_000 }, async () => {
    const one = await rankAt(1);
    const many = await rankAt(8);
    // One at a time at 1; at 8 the 6 runs of a task (then its 15 pairs) are in flight together.
    expect(one.f.max).toBe(1);
    expect(many.f.max).toBeGreaterThan(1);
    expect(many.f.max).toBeLessThanOrEqual(8);
    expect(one.f.finishOrder).toEqual([...one.f.finishOrder].sort((a, b) => a - b));
    // The delays made calls finish in another order than they started.
    expect(many.f.finishOrder).not.toEqual([...many.f.finishOrder].sort((a, b) => a - b));
    expect(many.f.started).toBe(one.f.started);
    // 2 tasks x (6 runs + 15 pairs + 6 swapped pairs) steps, each its own experiment and run.
    expect(one.rows.experiments).toHaveLength(2 * (6 + 15 + 6));
    expect(one.rows.runs).toHaveLength(54);
    expect(one.rows.calls.length).toBeGreaterThan(54);
    for (const table of Object.keys(one.rows) as Array<keyof typeof one.rows>) expect(many.rows[table], table).toEqual(one.rows[table]);
    expect(many.result).toEqual(one.result);
    expect(Object.keys(one.files)).toEqual(expect.arrayContaining(['self/train.jsonl', 'verifier/train.jsonl', 'verifier/manifest.json', 'env/rank-p-t1-r5/guard.json']));
    expect(many.files).toEqual(one.files);
  });

  async function rsiAt(parallel: number) {
    const dir = tmp();
    const base = path.join(dir, 'base.gguf');
    writeFileSync(base, 'base');
    const db = path.join(dir, 'f.db');
    const store = openStore(db);
    const f = flight();
    const log: Array<{ start: string; seqs: SftSequence[] }> = [];
    const o: RsiOptions = {
      loopId: 'rsi-p', outDir: path.join(dir, 'out'), cycles: 2, baseModel: base, design: null, outer: { ...outer('x'), tamperer: undefined } as RsiOptions['outer'],
      thresholds: { maxQuarantinedShare: 0.25, minAgreement: 0 }, sft: { passes: 2, lr: 1e-3, batch: 8 }, heldoutSampling: { temperature: 0 }, heldoutSamples: 2,
      allowUnreliableJudge: true,
    };
    let report;
    try {
      report = await runRsi({
        store, trainer: fakeTrainer(log), makeProvider: async (file) => delayed(scripted(file), f), family,
        trainTasks: ds.load({ split: 'train', limit: 2 }), heldoutTasks: ds.load({ split: 'heldout', limit: 3 }), parallel,
      }, o);
    } finally {
      store.close();
    }
    return { f, report: untimed(JSON.parse(JSON.stringify(report)), dir), rows: rowsOf(db, dir), files: filesOf(o.outDir, dir), trained: log.map((l) => ({ start: l.start.split(dir).join('<dir>'), seqs: l.seqs.length })) };
  }

  it('rsi at parallel 1 and 8: the same rows, records, exports, versions and report', { timeout: 180_000 }, async () => {
    const one = await rsiAt(1);
    const many = await rsiAt(8);
    expect(one.f.max).toBe(1);
    expect(many.f.max).toBeGreaterThan(1);
    expect(many.f.finishOrder).not.toEqual([...many.f.finishOrder].sort((a, b) => a - b));
    expect(many.f.started).toBe(one.f.started);
    // Two cycles: each trained a version per arm (4 versions), held out 3 tasks x 2 samples per model.
    expect(one.rows.versions).toHaveLength(4);
    expect(one.rows.mass.length).toBeGreaterThan(0);
    for (const table of Object.keys(one.rows) as Array<keyof typeof one.rows>) expect(many.rows[table], table).toEqual(one.rows[table]);
    expect(many.report).toEqual(one.report);
    expect(Object.keys(one.files)).toEqual(expect.arrayContaining(['state.json', 'cycle-1/verifier/train.jsonl', 'cycle-2/self/manifest.json', 'versions/c1-verifier.gguf', 'versions/c2-self.gguf']));
    expect(many.files).toEqual(one.files);
    expect(many.trained).toEqual(one.trained);
  });

  it('evolve at parallel 1 and 3: three tasks at once write the same records in the same order', { timeout: 120_000 }, async () => {
    const first = parseMassDesign(FIRST_DESIGNS['learn-tool']!, { checks: family.checks.names() });
    if (!first.ok) throw new Error('the default design does not validate');
    const tasks = ds.load({ split: 'train', limit: 3 });
    // SIMULATED: the judge prefers A; the optimizer proposes the first design again (rejected as UNCHANGED) or nothing.
    const model = () => new ScriptedProvider((r) => (r.key.nodeId === 'judge' ? JSON.stringify({ winner: 'A', rationale: 'A' }) : r.key.nodeId === 'answer' ? JSON.stringify(r.seed % 2 ? 'search' : 'weather') : r.key.nodeId === 'orchestrator' ? JSON.stringify({ delegate: 'no', ask: 'x' }) : 'ok'));
    const at = async (parallel: number) => {
      const dir = tmp();
      const db = path.join(dir, 'e.db');
      const store = openStore(db);
      const f = flight();
      try {
        const report = await evolve({ evolutionId: 'evo-p', family, tasks, firstDesign: first.design, iterations: 2, rule: 'baseline', seed: 1, catalogue: { checks: family.checks.names() }, auditSwaps: 1 }, { store, provider: delayed(model(), f), tools: defaultTools(), parallel });
        return { f, report, mass: rowsOf(db, dir).mass };
      } finally {
        store.close();
      }
    };
    const one = await at(1);
    const many = await at(3);
    expect(one.f.max).toBe(1);
    expect(many.f.max).toBeGreaterThan(1);
    expect(one.mass.length).toBeGreaterThan(3 * 4);
    expect(many.mass).toEqual(one.mass);
    expect(many.report).toEqual(one.report);
  });
});
