/**
 * MASS steps in flight (issue 26; core/mass/inFlight.ts): `rank` of 2 learn-tool tasks x 18 runs
 * (the MASS default: 54 ring pairs and 6 swapped pairs per task) on a SIMULATED model (the
 * outer loop's plumbing model, core/mass/rsi.fixture.ts) that answers every call after a fixed
 * 50 ms, as a server with free slots would, at parallel 1, 8 and 18: wall seconds, calls, the
 * most calls in flight, the speed-up over parallel 1, and whether the loop's records are the same
 * as at parallel 1. Part of `npm run bench` (bench/index.ts, after the throughput section); alone:
 * `npx tsx bench/massInFlight.ts` (about 20 s).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { massFamily } from '../core/mass/family.ts';
import { runRank } from '../core/mass/rank.ts';
import { flight, scripted, type Flight } from '../core/mass/rsi.fixture.ts';
import type { ModelProvider } from '../core/model/provider.ts';
import { canonicalJson, openStore } from '../core/store/index.ts';
import { createLearnDataset } from '../core/tasks/learn.ts';

const LATENCY_MS = 50;
const family = massFamily('learn-tool');
const tasks = createLearnDataset('learn-tool', ['tool']).load({ split: 'train', limit: 2 });

/** `inner` answering after a fixed latency, counting calls in flight (SIMULATED). */
function slow(inner: ModelProvider, f: Flight): ModelProvider {
  return {
    name: inner.name,
    modelsLoaded: () => 0,
    dispose: async () => {},
    async generate(r) {
      f.max = Math.max(f.max, ++f.now);
      try {
        await new Promise((res) => setTimeout(res, LATENCY_MS));
        return await inner.generate(r);
      } finally {
        f.now--;
      }
    },
  };
}

async function rankAt(parallel: number) {
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-bench-mass-'));
  const store = openStore(path.join(dir, 'f.db'));
  const f = flight();
  try {
    const t0 = performance.now();
    await runRank({ store, provider: slow(scripted(''), f), family, tasks, parallel }, {
      prefix: 'bench', design: null, runs: 18, neighbours: 3, seed: 1, iterations: 500, train: 15, validation: 1, verifierMin: 1, sampling: { temperature: 1 },
      outDir: path.join(dir, 'out'), thresholds: { maxQuarantinedShare: 1, minAgreement: 0 }, allowUnreliableJudge: true,
    });
    const wall = (performance.now() - t0) / 1000;
    const calls = store.listExperiments().reduce((n, e) => n + store.getExperimentCalls(e.id).length, 0);
    const records = store.mass.list('bench').map((r) => `${r.kind} ${r.key} ${canonicalJson(r.value).split(dir).join('<dir>')}`).join('\n');
    return { parallel, wall, calls, max: f.max, records };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One row per parallelism: wall seconds, calls stored, most calls in flight, the loop's records as text. */
export interface MassInFlightRow { parallel: number; wall: number; calls: number; max: number; records: string }

/** Runs the rank at parallel 1, 8 and 18 (in that order, the first is the baseline). */
export async function benchMassInFlight(): Promise<MassInFlightRow[]> {
  const rows: MassInFlightRow[] = [];
  for (const p of [1, 8, 18]) rows.push(await rankAt(p));
  return rows;
}

/** The printed section: each row beside --parallel 1 (speed-up, and whether the records are identical). */
export function massInFlightLines(rows: readonly MassInFlightRow[], load: number): string[] {
  const base = rows[0]!;
  return [
    `MASS rank in flight: 2 tasks x 18 runs, SIMULATED model answering after ${LATENCY_MS} ms (load average ${load.toFixed(1)})`,
    ...rows.map((r) => `  --parallel ${String(r.parallel).padEnd(2)}  ${r.wall.toFixed(2)} s  ${r.calls} calls  most in flight ${r.max}  ${(base.wall / r.wall).toFixed(1)}x  records ${r.records === base.records ? 'identical to --parallel 1' : 'DIFFER from --parallel 1'}`),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchMassInFlight();
  for (const line of massInFlightLines(rows, (await import('node:os')).loadavg()[0]!)) console.log(line);
}
