/**
 * The cost of reproducibility (issue 24): the deterministic scheduler (default: one sequence per
 * llama.cpp decode, so what shares a batch never depends on timing) beside the timing-ordered
 * scheduler it replaced (node-llama-cpp's own: whatever sequences are queued at that instant share
 * a decode), kept as a bench-only baseline behind FLOWLAB_BENCH_SCHEDULER=timing
 * (models/resolve.ts). Two whole-process figures, the sides interleaved, best of `repeats`:
 * - the main job (`run examples/gsm8k-team.yaml --dataset gsm8k --split test --limit 10`), wall time;
 * - the workshop train-loop (`train-loop examples/workshop-learn.yaml --roles planner,solver`,
 *   G = 8 x 4 tasks, 32 rollouts in flight), seconds per iteration as the loop reports them
 *   (sampling, training, write + reload; start-up and held-out excluded) and its sampling part.
 * Also checks what the schedulers are for: the deterministic side's version files are the same
 * bytes in every repeat. Prints nothing.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/flowlab.js');

export type Scheduler = 'deterministic' | 'timing';

export interface ReproSide {
  /** Main job wall time, ms (best of repeats). */
  mainJobMs: number;
  /** Train-loop seconds per iteration (best of repeats) and its sampling part in that repeat. */
  secondsPerIteration: number;
  samplingSeconds: number;
  /** sha256 of every version file of each repeat (role/iter-NNN.gguf -> hex), in repeat order. */
  versions: Array<Record<string, string>>;
}

export interface ReproBenchResult {
  iterations: number;
  repeats: number;
  deterministic: ReproSide;
  timing: ReproSide;
  /** deterministic / timing - 1 (goal <= 0.10). */
  mainJobSlowdown: number;
  trainLoopSlowdown: number;
  /** Whether every repeat of a side wrote the same version files, byte for byte. */
  deterministicRepeats: boolean;
  timingRepeats: boolean;
}

function flowlab(args: string[], scheduler: Scheduler): { ms: number; stdout: string } {
  const env = { ...process.env, FLOWLAB_BENCH_SCHEDULER: scheduler === 'timing' ? 'timing' : '' };
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = performance.now() - t0;
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`flowlab ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr.slice(-2000)}`);
  return { ms, stdout: r.stdout };
}

/** sha256 of every .gguf under `dir`, keyed by its last two path parts (role/iter-NNN.gguf). */
function hashVersions(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const f = path.join(d, name);
      if (statSync(f).isDirectory()) walk(f);
      else if (name.endsWith('.gguf')) out[`${path.basename(d)}/${name}`] = createHash('sha256').update(readFileSync(f)).digest('hex');
    }
  };
  walk(dir);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Runs both sides `repeats` times, interleaved. */
export function benchReproducibility(options: { model: string; iterations?: number; repeats?: number }): ReproBenchResult {
  const iterations = options.iterations ?? 6;
  const repeats = options.repeats ?? 2;
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-bench-repro-'));
  const empty = (): ReproSide => ({ mainJobMs: Infinity, secondsPerIteration: Infinity, samplingSeconds: Infinity, versions: [] });
  const sides: Record<Scheduler, ReproSide> = { deterministic: empty(), timing: empty() };
  try {
    for (let r = 0; r < repeats; r++) {
      for (const s of ['deterministic', 'timing'] as const) {
        const side = sides[s];
        const db = path.join(dir, `${s}-${r}.db`);
        const main = flowlab(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--split', 'test', '--limit', '10', '--model', options.model, '--threads', '1', '--db', db], s);
        side.mainJobMs = Math.min(side.mainJobMs, main.ms);
        const versionsDir = path.join(dir, `${s}-${r}-versions`);
        const loop = flowlab(['train-loop', 'examples/workshop-learn.yaml', '--dataset', 'learn-team', '--roles', 'planner,solver', '--model', options.model,
          '--iterations', String(iterations), '--heldout', '16', '--seed', '7', '--threads', '1', '--db', db, '--versions-dir', versionsDir], s);
        const m = /Seconds per iteration: ([\d.]+) \(sampling ([\d.]+)/.exec(loop.stdout);
        if (!m) throw new Error(`train-loop printed no "Seconds per iteration" line:\n${loop.stdout.slice(-1000)}`);
        if (Number(m[1]) < side.secondsPerIteration) [side.secondsPerIteration, side.samplingSeconds] = [Number(m[1]), Number(m[2])];
        side.versions.push(hashVersions(versionsDir));
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const same = (v: Array<Record<string, string>>) => v.every((x) => JSON.stringify(x) === JSON.stringify(v[0]));
  return {
    iterations,
    repeats,
    deterministic: sides.deterministic,
    timing: sides.timing,
    mainJobSlowdown: sides.deterministic.mainJobMs / sides.timing.mainJobMs - 1,
    trainLoopSlowdown: sides.deterministic.secondsPerIteration / sides.timing.secondsPerIteration - 1,
    deterministicRepeats: same(sides.deterministic.versions),
    timingRepeats: same(sides.timing.versions),
  };
}

/** The bench's lines for `r` (npm run bench; bench/index.ts). */
export function printReproBench(r: ReproBenchResult): void {
  const fmt = (x: number, dp = 3) => x.toFixed(dp);
  const ok = (pass: boolean) => (pass ? 'OK' : 'MISSED');
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${fmt(100 * x, 1)}%`;
  const d = r.deterministic;
  const t = r.timing;
  console.log(`repro    deterministic scheduler (one sequence per decode) vs timing-ordered (mixed decode batches, bench-only baseline), best of ${r.repeats}, interleaved`);
  console.log(`  main job          ${fmt(d.mainJobMs, 0).padStart(6)} ms   timing-ordered ${fmt(t.mainJobMs, 0)} ms   ${pct(r.mainJobSlowdown)}   goal <= +10%   ${ok(r.mainJobSlowdown <= 0.1)}   (run examples/gsm8k-team.yaml --limit 10, stories260K)`);
  console.log(`  workshop loop     ${fmt(d.secondsPerIteration, 2).padStart(6)} s/it (sampling ${fmt(d.samplingSeconds, 2)})   timing-ordered ${fmt(t.secondsPerIteration, 2)} s/it (sampling ${fmt(t.samplingSeconds, 2)})   ${pct(r.trainLoopSlowdown)}   goal <= +10%   ${ok(r.trainLoopSlowdown <= 0.1)}   (train-loop examples/workshop-learn.yaml, ${r.iterations} iterations, seed 7)`);
  console.log(`  version files     deterministic: ${r.deterministicRepeats ? 'the same bytes in every repeat' : 'DIFFER between repeats'}; timing-ordered: ${r.timingRepeats ? 'the same bytes in every repeat (this time)' : 'differ between repeats'}`);
}
