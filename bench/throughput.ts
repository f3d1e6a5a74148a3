/**
 * Throughput (issue 26): tasks in flight against OpenAI-compatible servers. A loopback server
 * written for the bench (bench/latencyServer.mjs, SIMULATED: answers are a function of the
 * prompt) answers each call after a fixed 100 ms and counts calls in flight; it runs in its own
 * process, so the lab's event loop does not delay its timers. On it, `examples/gsm8k-team.yaml`
 * (four sequential calls per task: plan, solve, verify, answer):
 * - 200 tasks at the default parallelism (three times the sum of the endpoints' concurrency: tasks in
 *   flight; the endpoints' concurrency bounds the calls) and, in the same run, `--parallel 1` on
 *   the first 20 tasks (200 would take 80 s): wall time as a share of the limit (goal >= 0.8; see
 *   {@link limitSeconds}), the most calls in flight the
 *   server saw, and whether the 20 tasks' stored answers are the same at both widths;
 * - two replicas behind one reference: throughput against one replica (goal >= 1.8x);
 * - two replicas, one answering 429 to every third call: every task completes (nothing lost,
 *   answers the same as on one replica), throughput, the endpoint decisions taken.
 * - a study of 6 cells (one condition x 3 zones of 8 tasks x 2 seeds) on one replica, `--parallel`
 *   at the replica's concurrency (cells at once, one shared budget) beside the default (one cell
 *   after another, each at the default parallelism): wall time as a share of the limit, and
 *   whether the two table.csv files are the same bytes.
 * Runs alone: `npx tsx bench/throughput.ts`; `npm run bench` prints it with the rest.
 * FLOWLAB_BENCH_THROUGHPUT_TASKS (default 200) and FLOWLAB_BENCH_THROUGHPUT_CONCURRENCY (per
 * replica, default 16) change the sizes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startExperiment, type ExperimentEvent } from '../core/experiments/index.ts';
import { openStore } from '../core/store/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { loadWorkflowFile } from '../core/workflow/index.ts';
import { fileModelPort } from '../models/factory.ts';
import { resolveModels } from '../models/resolve.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const LATENCY_MS = 100;

interface Server {
  baseUrl: string;
  stats(): Promise<{ calls: number; answered: number; rejected: number; inFlight: number; maxInFlight: number }>;
  reset(): Promise<void>;
  stop(): void;
}

/** bench/latencyServer.mjs in a child process. */
async function startServer(args: string[] = []): Promise<Server> {
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'bench/latencyServer.mjs'), '--latency', String(LATENCY_MS), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      const nl = text.indexOf('\n');
      if (nl >= 0) resolve((JSON.parse(text.slice(0, nl)) as { port: number }).port);
    });
    child.on('exit', (code) => reject(new Error(`latency server exited ${code}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `${base}/v1`,
    stats: async () => (await (await fetch(`${base}/stats`)).json()) as Awaited<ReturnType<Server['stats']>>,
    reset: async () => void (await fetch(`${base}/reset`, { method: 'POST' })).body?.cancel(),
    stop: () => void child.kill(),
  };
}

/** One experiment's figures. */
export interface ThroughputRun {
  tasks: number;
  parallel: number;
  wallSeconds: number;
  /** Calls answered (all servers), calls refused (429). */
  calls: number;
  rejected: number;
  /** The most calls in flight at once, per server. */
  maxInFlight: number[];
  completedRuns: number;
  failedRuns: number;
  /** Stored answers, by task index. */
  answers: string[];
  notes: string[];
  decisions: number;
  /** CPU seconds this process spent (user + system) during the run: the lab's own cost. */
  cpuSeconds: number;
}

async function runOnce(dataDir: string, servers: Server[], ref: string, tasks: number, parallel: number | undefined): Promise<ThroughputRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-throughput-'));
  const store = openStore(path.join(dir, 'lab.db'));
  try {
    for (const s of servers) await s.reset();
    const file = path.join(ROOT, 'examples/gsm8k-team.yaml');
    const tools = defaultTools();
    const workflow = loadWorkflowFile(file, { tools });
    const { config } = resolveModels(workflow.graph, { default: ref });
    const notes: string[] = [];
    let used = parallel ?? 0;
    const onEvent = (e: ExperimentEvent) => {
      if (e.type !== 'note') return;
      notes.push(e.message);
      const m = /^(\d+) tasks in flight/.exec(e.message);
      if (m) used = Number(m[1]);
    };
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const handle = await startExperiment(
      { kind: 'run', workflow: { ...workflow, file }, dataset: 'gsm8k', split: 'test', limit: tasks, seed: 0, dataDir, models: config, ...(parallel !== undefined && { parallel }) },
      { store, models: fileModelPort(), tools },
      { onEvent },
    );
    const outcome = await handle.done;
    const wallSeconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    if (outcome.status !== 'completed') throw new Error(`throughput bench: experiment ended ${outcome.status}: ${outcome.message ?? ''}`);
    const stats = await Promise.all(servers.map((s) => s.stats()));
    const runs = store.listRuns(outcome.experimentId);
    return {
      tasks,
      parallel: used,
      wallSeconds,
      calls: stats.reduce((a, s) => a + s.answered, 0),
      rejected: stats.reduce((a, s) => a + s.rejected, 0),
      maxInFlight: stats.map((s) => s.maxInFlight),
      completedRuns: runs.filter((r) => r.status === 'completed' && !r.failures.infrastructure).length,
      failedRuns: runs.filter((r) => r.status !== 'completed' || r.failures.infrastructure).length,
      answers: runs.map((r) => r.answer ?? ''),
      notes,
      decisions: store.endpointDecisions.of(outcome.experimentId).length,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
    };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One study run's figures. */
export interface StudyThroughput {
  cells: number;
  tasks: number;
  parallel: number | undefined;
  wallSeconds: number;
  maxInFlight: number;
  status: string;
  csv: string;
}

/** The 6-cell study plan (gsm8k-team on 3 zones of 8 tasks x 2 seeds). */
const STUDY_PLAN = (workflow: string) => `name: bench-throughput
baseline: team
conditions:
  - { id: team, kind: workflow, workflow: ${JSON.stringify(workflow)} }
zones:
  - { id: a, kind: in-distribution, dataset: gsm8k, split: test, limit: 8 }
  - { id: b, kind: in-distribution, dataset: gsm8k, split: test, limit: 8, offset: 8 }
  - { id: c, kind: in-distribution, dataset: gsm8k, split: test, limit: 8, offset: 16 }
seeds: [0, 1]
models:
  - { id: m, model: /nowhere/overridden.gguf, threads: 1 }
`;

async function studyOnce(dataDir: string, server: Server, ref: string, parallel: number | undefined): Promise<StudyThroughput> {
  const { main } = await import('../cli/main.ts');
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-throughput-study-'));
  try {
    const plan = path.join(dir, 'plan.yaml');
    writeFileSync(plan, STUDY_PLAN(path.join(ROOT, 'examples/gsm8k-team.yaml')));
    await server.reset();
    let out = '';
    let err = '';
    const io = { stdout: (x: string) => void (out += x), stderr: (x: string) => void (err += x), isTTY: false };
    const t0 = performance.now();
    const code = await main(['study', plan, '--model', ref, '--db', path.join(dir, 'lab.db'), '--data-dir', dataDir, '--out', path.join(dir, 'out'), '--json', ...(parallel === undefined ? [] : ['--parallel', String(parallel)])], io);
    const wallSeconds = (performance.now() - t0) / 1000;
    if (code !== 0) throw new Error(`throughput bench: study exited ${code}: ${err.slice(-1500)}`);
    const status = (JSON.parse(out) as { status: string }).status;
    return { cells: 6, tasks: 48, parallel, wallSeconds, maxInFlight: (await server.stats()).maxInFlight, status, csv: readFileSync(path.join(dir, 'out/table.csv'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench's figures (see the module comment). */
export interface ThroughputResult {
  concurrency: number;
  dataset: string;
  one: ThroughputRun;
  serial: ThroughputRun;
  two: ThroughputRun;
  shedding: ThroughputRun;
  /** The 6-cell study: default (cells one after another) and with --parallel = the replica's concurrency. */
  study: { serial: StudyThroughput; parallel: StudyThroughput };
  /** Model calls on a task's critical path (all of a task's calls are sequential in this team). */
  callsPerTask: number;
  /** The machine's 1-minute load average and cores when the bench started (other work slows the timings). */
  load: number;
  cores: number;
}

/** Runs the throughput bench. `sharedDir`'s GSM8K test split when present, else 200 generated questions (said in `dataset`). */
export async function benchThroughput(options: { sharedDir: string; tasks?: number; concurrency?: number }): Promise<ThroughputResult> {
  const load = os.loadavg()[0]!;
  const tasks = options.tasks ?? 200;
  const concurrency = options.concurrency ?? 16;
  let dataDir = path.join(options.sharedDir, 'data');
  let dataset = 'gsm8k test split';
  let scratch: string | undefined;
  if (!existsSync(path.join(dataDir, 'gsm8k/test.jsonl'))) {
    scratch = mkdtempSync(path.join(tmpdir(), 'flowlab-throughput-data-'));
    dataDir = scratch;
    mkdirSync(path.join(dataDir, 'gsm8k'), { recursive: true });
    writeFileSync(path.join(dataDir, 'gsm8k/test.jsonl'), Array.from({ length: tasks }, (_, i) => JSON.stringify({ question: `What is ${i} + ${i + 1}?`, answer: `#### ${2 * i + 1}` })).join('\n') + '\n');
    dataset = `${tasks} generated sums (GSM8K not found; set FLOWLAB_SHARED)`;
  }
  const a = await startServer();
  const b = await startServer();
  const c = await startServer(['--reject-every', '3']);
  try {
    const one = `openai:${a.baseUrl}#latency&concurrency=${concurrency}`;
    const two = `openai:${a.baseUrl}#latency&concurrency=${concurrency},${b.baseUrl}#latency&concurrency=${concurrency}`;
    const shed = `openai:${c.baseUrl}#latency&concurrency=${concurrency},${b.baseUrl}#latency&concurrency=${concurrency}`;
    await runOnce(dataDir, [a], one, Math.min(2 * concurrency, tasks), undefined); // warm-up (JIT, sockets), not reported
    const r1 = await runOnce(dataDir, [a], one, tasks, undefined);
    const serial = await runOnce(dataDir, [a], one, Math.min(20, tasks), 1);
    const r2 = await runOnce(dataDir, [a, b], two, tasks, undefined);
    const r3 = await runOnce(dataDir, [c, b], shed, tasks, undefined);
    const study = { serial: await studyOnce(dataDir, a, one, undefined), parallel: await studyOnce(dataDir, a, one, concurrency) };
    return { concurrency, dataset, one: r1, serial, two: r2, shedding: r3, study, callsPerTask: r1.calls / r1.tasks, load, cores: os.availableParallelism() };
  } finally {
    for (const s of [a, b, c]) s.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The limit (s) of a run: the larger of critical path x tasks / tasks in flight (each task's calls
 * are sequential) and calls x latency / call slots (each slot serves one call at a time). With
 * calls = calls per task x tasks both are `calls per task x latency x tasks / n`, n the smaller of
 * tasks in flight and call slots (`capacity`).
 */
export function limitSeconds(run: Pick<ThroughputRun, 'tasks' | 'parallel'>, callsPerTask: number, capacity: number): number {
  return (callsPerTask * LATENCY_MS * run.tasks) / 1000 / Math.min(run.parallel, capacity);
}

/** The section's lines, as `npm run bench` prints them. */
export function throughputLines(t: ThroughputResult): string[] {
  const fmt = (x: number, d = 2) => x.toFixed(d);
  const ok = (pass: boolean) => (pass ? 'OK' : 'MISSED');
  const tps = (r: ThroughputRun) => r.tasks / r.wallSeconds;
  const cap1 = t.concurrency;
  const lim1 = limitSeconds(t.one, t.callsPerTask, cap1);
  const limS = limitSeconds(t.serial, t.callsPerTask, 1);
  const lim2 = limitSeconds(t.two, t.callsPerTask, 2 * cap1);
  const sameAnswers = t.serial.answers.every((x, i) => x === t.one.answers[i]);
  const lostShed = t.shedding.tasks - t.shedding.completedRuns;
  const sameShed = t.shedding.answers.length === t.one.answers.length && t.shedding.answers.every((x, i) => x === t.one.answers[i]);
  const line = (label: string, r: ThroughputRun, limit: number) =>
    `  ${label.padEnd(19)} ${fmt(r.wallSeconds).padStart(6)} s  ${fmt(tps(r), 1).padStart(6)} tasks/s  limit ${fmt(limit)} s  ${fmt(limit / r.wallSeconds)} of the limit's speed  max in flight ${r.maxInFlight.join(' + ')}  lab cpu ${fmt(r.cpuSeconds, 1)} s`;
  return [
    `throughput examples/gsm8k-team.yaml on ${t.dataset}, loopback server answering after ${LATENCY_MS} ms (bench/latencyServer.mjs, SIMULATED, own process), ${fmt(t.callsPerTask, 2)} calls per task, concurrency ${t.concurrency} per replica; load average ${fmt(t.load, 1)} on ${t.cores} cores`,
    `${line(`default, ${t.one.tasks} tasks`, t.one, lim1)}   (parallel ${t.one.parallel}: ${t.one.notes.find((n) => n.includes('tasks in flight')) ?? 'no note'})   goal >= 0.8   ${ok(lim1 / t.one.wallSeconds >= 0.8)}`,
    `${line(`--parallel 1, ${t.serial.tasks}`, t.serial, limS)}   (baseline, same run; ${fmt(tps(t.one) / tps(t.serial), 1)}x slower than the default per task; its ${t.serial.tasks} answers ${sameAnswers ? 'identical to' : 'DIFFER from'} the default's)`,
    `${line(`2 replicas, ${t.two.tasks}`, t.two, lim2)}   ${fmt(tps(t.two) / tps(t.one), 2)}x one replica   goal >= 1.8x   ${ok(tps(t.two) / tps(t.one) >= 1.8)}`,
    ...[t.study.serial, t.study.parallel].map((st) => {
      const lim = (t.callsPerTask * LATENCY_MS * st.tasks) / 1000 / cap1;
      const label = st.parallel === undefined ? 'study, default' : `study --parallel ${st.parallel}`;
      return `  ${label.padEnd(19)} ${fmt(st.wallSeconds).padStart(6)} s  ${fmt(st.tasks / st.wallSeconds, 1).padStart(6)} tasks/s  limit ${fmt(lim)} s  ${fmt(lim / st.wallSeconds)} of the limit's speed  max in flight ${st.maxInFlight}   (${st.cells} cells of 8 tasks, ${st.status}, whole command${st.parallel === undefined ? ': one cell after another, 8 in flight each' : `; table.csv ${st.csv === t.study.serial.csv ? 'identical to' : 'DIFFERS from'} the default's`})${st.parallel === undefined ? '' : `   ${fmt(t.study.serial.wallSeconds / st.wallSeconds, 2)}x the default`}`;
    }),
    `${line(`1 of 2 sheds 429`, t.shedding, lim2)}   ${t.shedding.completedRuns}/${t.shedding.tasks} tasks completed, ${lostShed} lost, answers ${sameShed ? 'identical to' : 'DIFFER from'} one replica's, ${t.shedding.rejected} calls refused (429), ${t.shedding.decisions} endpoint decisions stored   ${ok(lostShed === 0 && sameShed)}`,
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const sharedDir = process.env.FLOWLAB_SHARED ?? path.join(process.cwd(), '../shared');
  const t = await benchThroughput({ sharedDir, tasks: Number(process.env.FLOWLAB_BENCH_THROUGHPUT_TASKS ?? 200), concurrency: Number(process.env.FLOWLAB_BENCH_THROUGHPUT_CONCURRENCY ?? 16) });
  for (const l of throughputLines(t)) console.log(l);
  const shed = t.shedding.notes.find((n) => n.startsWith('endpoint decisions'));
  if (shed) console.log(`  ${shed}`);
}
