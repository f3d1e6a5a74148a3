/**
 * `npm run bench`: prints Flowlab's speed and memory figures, each beside a baseline measured in
 * the same run (and, where one exists, the figure measured before, as `was`), with the goal and
 * OK/MISSED. Goals: `flowlab --help` under 0.12 s as a whole process; a whole `flowlab replay`
 * of the 10-task main job under 5% of the whole live command; the engine's overhead per node at
 * least 10x lower than LangGraph.js's on the same 1,000-node chain and fan-out; engine overhead
 * < 0.2 ms per node on a 1,000-node graph; store > 50,000 node events/s and >= 0.8 of the bare
 * better-sqlite3 loop; credit over a 100,000-node trace < 100 ms, scaling linearly; a G = 8
 * rollout group batched through Flowlab >= 90% of raw node-llama-cpp; peak resident memory of
 * the main job and of the 30-iteration workshop train-loop under 400 MB; HumanEval's 164
 * canonical solutions checked in the code sandbox under 60 s on 2 cores (bench/sandbox.ts); prompt
 * run search over 100,000 runs (one experiment, one blamed role, a word in a completion) under 200 ms
 * beside the bare SQL query (bench/search.ts); prompt
 * tokens evaluated <= 40% of those sent with prefix reuse on the main job, as plain runs and as rollout groups, in two prompt layouts (bench/models.ts, with tune's best beside the default). Figures are printed,
 * not asserted. FLOWLAB_BENCH_TRAIN_ITERATIONS sets the train-loop's iterations (default 30). The cost
 * of reproducibility (bench/reproducibility.ts): the main job and the workshop train-loop with the
 * deterministic scheduler beside the timing-ordered one, goal at most 10% slower
 * (FLOWLAB_BENCH_REPRO_ITERATIONS, default 6). Throughput (bench/throughput.ts): 200 tasks of the main
 * workflow against a loopback server answering after 100 ms, at the default parallelism beside
 * --parallel 1, on two replicas (goal >= 1.8x one), and with one replica answering 429 to a third
 * of calls (nothing lost); goal: wall time >= 0.8 of the limit's speed; and MASS rank's runs and judge
 * pairs in flight at parallel 1, 8, 18 on a SIMULATED 50 ms model (bench/massInFlight.ts).
 */
import { existsSync } from 'node:fs';
import { setMaxListeners } from 'node:events';
import { benchEngine, type EngineBenchResult } from './engine.ts';
import { benchLangGraph } from './langgraph.ts';
import { benchStartup, benchTrainLoopMemory } from './startup.ts';
import { benchStore } from './store.ts';
import { benchCredit } from './credit.ts';

const fmt = (x: number, d = 3) => x.toFixed(d);
const ok = (pass: boolean) => (pass ? 'OK' : 'MISSED');
const sharedDir = process.env.FLOWLAB_SHARED ?? `${process.cwd()}/../shared`;
const stories = `${sharedDir}/models/stories260K.gguf`;

// Whole processes: start-up and the main job, live and replayed, beside `node -e 0`.
if (!existsSync(stories)) {
  console.log('startup  skipped (stories260K.gguf not found; set FLOWLAB_SHARED)');
} else {
  const s = benchStartup({ model: stories });
  const t = (x: { medianMs: number; minMs: number }) => `${fmt(x.medianMs, 0).padStart(6)} ms (min ${fmt(x.minMs, 0)})`;
  const none = (xs: string[]) => (xs.length ? xs.join(', ') : 'none');
  console.log(`startup  whole processes, median of ${s.help.runs} (${s.live.runs} live, ${s.replay.runs} replay), interleaved with node -e 0`);
  console.log(`  node -e 0          ${t(s.node)}   (baseline: Node's own start-up)`);
  console.log(`  flowlab --help     ${t(s.help)}   ${fmt(s.help.medianMs / s.node.medianMs, 2)}x node -e 0   goal < 120 ms   ${ok(s.help.medianMs < 120)}   (was ~320 ms through tsx; ${s.bundled ? 'prebuilt bundle out/cli' : 'NOT the bundle: run npm run build:cli'})`);
  console.log(`  main job, live     ${t(s.live)}   (run examples/gsm8k-team.yaml --dataset gsm8k --split test --limit 10, stories260K)`);
  console.log(`  main job, replay   ${t(s.replay)}   ${fmt(100 * s.replayOfLive, 1)}% of live   goal < 5%   ${ok(s.replayOfLive < 0.05)}   (was 14%)`);
  console.log(`  heavy modules      --help: ${none(s.loaded.help)}; replay: ${none(s.loaded.replay)}; live: ${none(s.loaded.live)}`);
  console.log(`  main job peak RSS  ${fmt(s.liveRssMiB, 0).padStart(6)} MiB   goal < 400 MiB   ${ok(s.liveRssMiB < 400)}`);
}

// Peers: the engine's own overhead per node beside LangGraph.js's, same graphs, same instant calls.
{
  // LangGraph adds an abort listener per running node to one signal: silence Node's leak warning.
  setMaxListeners(2000);
  const side = (x: EngineBenchResult) => `${fmt(x.overheadMsPerNode, 4)} ms/node (run ${fmt(x.engineMsPerNode, 4)}, bare ${fmt(x.baselineMsPerNode, 4)})`;
  console.log('peers    1,000 instant (scripted, simulated) nodes, overhead = run - bare call loop, best of 5');
  for (const shape of ['chain', 'fanout'] as const) {
    const f = await benchEngine({ shape });
    const l = await benchLangGraph({ shape });
    const times = l.overheadMsPerNode / f.overheadMsPerNode;
    console.log(`  ${shape.padEnd(7)} Flowlab ${side(f)}   LangGraph.js ${side(l)}`);
    console.log(`          LangGraph.js / Flowlab  ${fmt(times, 1)}x   goal >= 10x   ${ok(times >= 10)}`);
  }
}

// Local models: prefix reuse on and off on the main job with a template-carrying model; tune beside the default.
if (existsSync(stories)) {
  const { benchModels, printModelsBench } = await import('./models.ts');
  printModelsBench(await benchModels({ stories }));
}

const engine = await benchEngine();
console.log(`engine   ${engine.nodes}-node graph, instant (scripted, simulated) model`);
console.log(`  engine run        ${fmt(engine.engineMsPerNode, 4)} ms/node`);
console.log(`  bare call loop    ${fmt(engine.baselineMsPerNode, 4)} ms/call   (baseline)`);
console.log(`  overhead          ${fmt(engine.overheadMsPerNode, 4)} ms/node   target < 0.2   ${engine.overheadMsPerNode < 0.2 ? 'OK' : 'MISSED'}`);
console.log(`  ratio             ${fmt(engine.ratio, 1)}x the bare loop`);

const store = await benchStore();
console.log(`store    ${store.events} node events in ${store.runs} runs (${store.calls} model calls), WAL file DB`);
console.log(`  Store.saveRuns    ${Math.round(store.rowsPerSec).toLocaleString('en')} events/s   target > 50,000   ${store.rowsPerSec > 50_000 ? 'OK' : 'MISSED'}`);
console.log(`  bare insert loop  ${Math.round(store.baselineRowsPerSec).toLocaleString('en')} events/s   (baseline)`);
console.log(`  ratio             ${fmt(store.ratio, 2)} of the bare loop   goal >= 0.8   ${ok(store.ratio >= 0.8)}   (was 0.49, then 0.65; by CPU time ${fmt(store.cpuRatio, 2)})`);
console.log(`  one tx per run    ${Math.round(store.perRunRowsPerSec).toLocaleString('en')} events/s   (how a live run writes)`);
console.log(`  getRunEvents      ${Math.round(store.readRunsPerSec).toLocaleString('en')} runs/s   (each run's events and calls read back)`);

// Issue 29: finding runs — 100,000 runs, one experiment's runs blamed on a role with a word in a completion.
{
  const { benchSearch, searchLines } = await import('./search.ts');
  for (const line of searchLines(await benchSearch())) console.log(line);
}

const credit = benchCredit();
console.log(`credit   computeCredit over a layered trace (1% failed nodes, ${credit.roots} roots at 100k)`);
console.log(`  100,000 nodes     ${fmt(credit.ms100k, 1)} ms   target < 100   ${credit.ms100k < 100 ? 'OK' : 'MISSED'}`);
console.log(`  10,000 nodes      ${fmt(credit.ms10k, 2)} ms   (baseline)`);
console.log(`  ratio 100k/10k    ${fmt(credit.ratio, 1)}   (linear is about 10; the 10k trace fits in CPU cache, so the ratio reads high)`);

// The code sandbox: HumanEval's 164 canonical solutions in the warm Pyodide pool, beside a fresh
// interpreter per task (a few tasks measured, extrapolated to 164).
{
  const { benchSandbox } = await import('./sandbox.ts');
  if (!existsSync(`${sharedDir}/data/humaneval/HumanEval.jsonl`)) {
    console.log('sandbox  skipped (HumanEval.jsonl not found; set FLOWLAB_SHARED)');
  } else {
    const b = await benchSandbox({ sharedDir });
    const s = (ms: number) => `${fmt(ms / 1000, 1).padStart(6)} s`;
    console.log(`sandbox  HumanEval canonical check, ${b.tasks} tasks, 2 warm Pyodide interpreters (models/sandbox), ${b.passed}/${b.tasks} pass`);
    console.log(`  pool, whole check ${s(b.totalMs)}   (start ${fmt(b.warmMs / 1000, 1)} s + runs ${fmt(b.checkMs / 1000, 1)} s, ${fmt(b.checkMs / b.tasks, 0)} ms/task)   goal < 60 s on 2 cores   ${ok(b.totalMs < 60_000)}`);
    console.log(`  cold per task     ${s(b.coldPerTaskMs * b.tasks)}   (baseline, EXTRAPOLATED: ${fmt(b.coldPerTaskMs, 0)} ms/task measured on ${b.sampled} tasks x ${b.tasks}; a fresh interpreter loading Pyodide each time)`);
    console.log(`  snapshot per task ${s(b.snapshotPerTaskMs * b.tasks)}   (baseline, EXTRAPOLATED: ${fmt(b.snapshotPerTaskMs, 0)} ms/task on ${b.sampled} tasks x ${b.tasks}; a fresh interpreter from the memory snapshot)`);
  }
}

// Issue 5: a rollout group of G = 8 decoded together vs one after another, raw node-llama-cpp
// beside Flowlab (target: Flowlab's batched group reaches >= 90% of raw batched throughput).
const { benchBatching } = await import('./batching.ts');
for (const file of ['stories260K.gguf', 'llama-2-tiny-random.gguf']) {
  const modelPath = `${sharedDir}/models/${file}`;
  if (!existsSync(modelPath)) {
    console.log(`batching ${file}: skipped (not found; set FLOWLAB_SHARED)`);
    continue;
  }
  const b = await benchBatching({ model: modelPath });
  const side = (s: { ms: number; cpuMs: number; tokensPerSec: number }) => `${fmt(s.ms, 0).padStart(6)} ms  ${Math.round(s.tokensPerSec).toLocaleString('en').padStart(6)} tok/s  (cpu ${fmt(s.cpuMs, 0)} ms)`;
  console.log(`batching ${b.model}, G=${b.group} sequences x ${b.maxTokens} tokens, 1 thread, mixed batches (best of 5, interleaved)`);
  console.log(`  raw batched        ${side(b.raw.batched)}`);
  console.log(`  raw one by one     ${side(b.raw.sequential)}   batching gain ${fmt(b.raw.speedup, 2)}x`);
  console.log(`  Flowlab batched    ${side(b.flowlab.batched)}   (parallel ${b.group}, sequences ${b.group})`);
  console.log(`  Flowlab one by one ${side(b.flowlab.sequential)}   batching gain ${fmt(b.flowlab.speedup, 2)}x`);
  console.log(`  Flowlab / raw      ${fmt(100 * b.flowlabOfRaw, 0)}% of raw batched throughput   target >= 90%   ${b.flowlabOfRaw >= 0.9 ? 'OK' : 'MISSED'}   (by cpu time: ${fmt(100 * b.flowlabOfRawCpu, 0)}%)`);
}

// Issue 6: laptop RL — the tfjs trainer's step times on stories260K, write-back and llama.cpp
// reload, and llama.cpp's sampling speed in the same run; reference figures measured earlier on the 2-core development machine (bench/training.ts).
{
  const { benchTraining } = await import('./training.ts');
  const modelPath = `${sharedDir}/models/stories260K.gguf`;
  if (!existsSync(modelPath)) {
    console.log('training stories260K.gguf: skipped (not found; set FLOWLAB_SHARED)');
  } else {
    const t = await benchTraining({ model: modelPath });
    const ms = (x: { medianMs: number; minMs: number }) => `${fmt(x.medianMs, 0).padStart(5)} ms (min ${fmt(x.minMs, 0)})`;
    const r = t.reference;
    console.log(`training ${t.model} (${t.parameters.toLocaleString('en')} parameters), tfjs-core + wasm, batch ${t.batch} x ${t.tokens} tokens, Adam (median of 5)`);
    console.log(`  SFT step          ${ms(t.sft)}   ${Math.round(t.sft.tokensPerSec).toLocaleString('en').padStart(6)} train tok/s   (reference: ${r.sftStepMs[0]}-${r.sftStepMs[1]} ms, ~${r.trainTokensPerSec.toLocaleString('en')} tok/s)`);
    console.log(`  policy step       ${ms(t.policy)}   ${Math.round(t.policy.tokensPerSec).toLocaleString('en').padStart(6)} train tok/s   (incl. the reference model's forward for the KL)`);
    console.log(`  write GGUF        ${ms(t.write)}   (reference: ${r.writeMs[0]}-${r.writeMs[1]} ms)`);
    console.log(`  llama.cpp reload  ${ms(t.reload)}   (dispose + load + context; reference: ${r.reloadMs[0]}-${r.reloadMs[1]} ms)`);
    console.log(`  llama.cpp sample  ${Math.round(t.samplingTokensPerSec).toLocaleString('en').padStart(6)} tok/s   (raw greedy, one sequence, 1 thread, same run)`);
  }
}

// Issue 26: throughput — tasks in flight against a loopback server with a fixed 100 ms latency
// (one replica, two, one shedding load with 429), beside --parallel 1 (bench/throughput.ts; alone: npx tsx bench/throughput.ts).
{
  const { benchThroughput, throughputLines } = await import('./throughput.ts');
  for (const line of throughputLines(await benchThroughput({ sharedDir }))) console.log(line);
  // MASS steps in flight: rank's champion runs and tournament pairs at parallel 1, 8, 18 (bench/massInFlight.ts).
  const { benchMassInFlight, massInFlightLines } = await import('./massInFlight.ts');
  const { loadavg } = await import('node:os');
  for (const line of massInFlightLines(await benchMassInFlight(), loadavg()[0]!)) console.log(line);
}

// Issue 24: the cost of reproducibility — the deterministic scheduler beside the timing-ordered one
// (bench-only baseline), same run: the main job's wall time and the workshop train-loop's s/iteration.
if (existsSync(stories)) {
  const { benchReproducibility, printReproBench } = await import('./reproducibility.ts');
  printReproBench(benchReproducibility({ model: stories, iterations: Number(process.env.FLOWLAB_BENCH_REPRO_ITERATIONS ?? 6), repeats: 2 }));
}

// Peak resident memory of the workshop train-loop (whole process, its default settings).
if (existsSync(stories)) {
  const iterations = Number(process.env.FLOWLAB_BENCH_TRAIN_ITERATIONS ?? 30);
  const m = benchTrainLoopMemory({ model: stories, iterations });
  console.log(`memory   train-loop examples/workshop-learn.yaml --roles planner,solver, ${m.iterations} iterations, stories260K (${fmt(m.seconds, 0)} s, ${fmt(m.seconds / m.iterations, 2)} s/iteration with start-up and held-out)`);
  console.log(`  peak RSS          ${fmt(m.rssMiB, 0).padStart(6)} MiB   goal < 400 MiB   ${ok(m.rssMiB < 400)}   (was 1.16 GB at 30 iterations)`);
}
