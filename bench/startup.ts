/**
 * Whole-process benchmarks of the CLI, each beside `node -e 0` measured in the same run:
 * - start-up: `node bin/flowlab.js --help` (the prebuilt bundle, out/cli; scripts/build-cli.mjs);
 * - the main job: the live command (README: `run examples/gsm8k-team.yaml --dataset gsm8k
 *   --split test --limit 10 --model stories260K.gguf`) against `replay` of the experiment it
 *   stored, each a whole process (start-up, database, engine, exit);
 * - peak resident memory (maxRSS) of the live main job and of the workshop train-loop
 *   (`train-loop examples/workshop-learn.yaml --dataset learn-team --roles planner,solver`);
 * - which of these commands load node-llama-cpp or tfjs (bench/probe.mjs records it).
 * Times are medians of several runs; prints nothing, the caller prints.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/flowlab.js');
const PROBE = path.join(ROOT, 'bench/probe.mjs');

/** Median and minimum wall time of `runs` runs, in ms. */
export interface ProcessTime {
  medianMs: number;
  minMs: number;
  runs: number;
}

export interface StartupBenchResult {
  /** `node -e 0`: the floor every Node process pays. */
  node: ProcessTime;
  /** `node bin/flowlab.js --help`. */
  help: ProcessTime;
  /** Whether bin/flowlab.js ran the prebuilt bundle (out/cli/main.js exists and is fresh). */
  bundled: boolean;
  /** The live main job, whole process. */
  live: ProcessTime;
  /** `flowlab replay` of the live job's experiment, whole process. */
  replay: ProcessTime;
  /** replay / live (medians). */
  replayOfLive: number;
  /** Peak RSS of the live main job, MiB (the largest of its runs). */
  liveRssMiB: number;
  /** Heavy runtime modules each command resolved (empty: none). */
  loaded: { help: string[]; replay: string[]; live: string[] };
}

export interface TrainLoopMemoryResult {
  iterations: number;
  seconds: number;
  rssMiB: number;
}

interface Run {
  ms: number;
  stdout: string;
  rssKiB?: number;
  loaded: string[];
}

/** Runs `node [--import probe] args` once; throws with its stderr when it exits non-zero. */
function runNode(args: string[], opts: { probe?: 'rss' | 'loaded'; env?: NodeJS.ProcessEnv; cwd?: string; okCodes?: number[] } = {}): Run {
  const dir = opts.probe ? mkdtempSync(path.join(tmpdir(), 'flowlab-bench-probe-')) : undefined;
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  const nodeArgs = [...args];
  if (dir) {
    nodeArgs.unshift('--import', PROBE);
    if (opts.probe === 'rss') env.FLOWLAB_BENCH_RSS = path.join(dir, 'rss');
    else env.FLOWLAB_BENCH_LOADED = path.join(dir, 'loaded');
  }
  try {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, nodeArgs, { cwd: opts.cwd ?? ROOT, env, encoding: 'utf8', maxBuffer: 64 << 20 });
    const ms = performance.now() - t0;
    if (r.error) throw r.error;
    if (!(opts.okCodes ?? [0]).includes(r.status ?? -1)) {
      throw new Error(`node ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr.slice(-2000)}`);
    }
    const read = (f: string) => (dir && existsSync(path.join(dir, f)) ? readFileSync(path.join(dir, f), 'utf8') : '');
    const rss = read('rss');
    return { ms, stdout: r.stdout, ...(rss ? { rssKiB: Number(rss) } : {}), loaded: [...new Set(read('loaded').split('\n').filter(Boolean).map(shortName))] };
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** `file:///…/node_modules/@tensorflow/tfjs-core/dist/index.js` -> `@tensorflow/tfjs-core`. */
function shortName(url: string): string {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  return m ? m[1]! : url;
}

function stats(ms: number[]): ProcessTime {
  const s = [...ms].sort((a, b) => a - b);
  return { medianMs: s[s.length >> 1]!, minMs: s[0]!, runs: s.length };
}

/** `node -e 0` and `flowlab --help`, interleaved, `runs` each. */
function timeStartup(runs: number): { node: ProcessTime; help: ProcessTime } {
  const node: number[] = [];
  const help: number[] = [];
  runNode(['-e', '0']); // warm the file cache
  runNode([BIN, '--help']);
  for (let i = 0; i < runs; i++) {
    node.push(runNode(['-e', '0']).ms);
    help.push(runNode([BIN, '--help']).ms);
  }
  return { node: stats(node), help: stats(help) };
}

/** True when bin/flowlab.js will run the bundle: it exists and no bundled source is newer. */
function bundleFresh(): boolean {
  const bundle = path.join(ROOT, 'out/cli/main.js');
  const list = path.join(ROOT, 'out/cli/sources.txt');
  if (!existsSync(bundle) || !existsSync(list)) return false;
  const built = statMs(bundle);
  return readFileSync(list, 'utf8').split('\n').filter(Boolean).every((f) => statMs(path.join(ROOT, f)) <= built);
}

function statMs(file: string): number {
  return statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0;
}

/**
 * Start-up, the main job live and replayed, and its peak memory. `model`: stories260K.gguf;
 * `liveRuns` (default 3) and `replayRuns` (default 5) whole-process runs, `helpRuns` (default 11).
 * Errors: a command that exits non-zero (its stderr in the message).
 */
export function benchStartup(options: { model: string; liveRuns?: number; replayRuns?: number; helpRuns?: number }): StartupBenchResult {
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-bench-cli-'));
  try {
    const { node, help } = timeStartup(options.helpRuns ?? 11);
    const db = path.join(dir, 'main.db');
    const liveArgs = [BIN, 'run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--split', 'test', '--limit', '10', '--model', options.model, '--db', db, '--json'];
    const live: number[] = [];
    let rssKiB = 0;
    let experimentId = '';
    for (let i = 0; i < (options.liveRuns ?? 3); i++) {
      const r = runNode(liveArgs, { probe: 'rss' });
      live.push(r.ms);
      rssKiB = Math.max(rssKiB, r.rssKiB ?? 0);
      experimentId = (JSON.parse(r.stdout) as { experimentId: string }).experimentId;
    }
    // replay exits 1 when an output differs from the recording: still a whole command, timed alike.
    const replayArgs = [BIN, 'replay', experimentId, '--db', db];
    runNode(replayArgs, { okCodes: [0, 1] });
    const replay: number[] = [];
    for (let i = 0; i < (options.replayRuns ?? 5); i++) replay.push(runNode(replayArgs, { okCodes: [0, 1] }).ms);
    const loaded = {
      help: runNode([BIN, '--help'], { probe: 'loaded' }).loaded,
      replay: runNode(replayArgs, { probe: 'loaded', okCodes: [0, 1] }).loaded,
      live: runNode(liveArgs, { probe: 'loaded' }).loaded,
    };
    const liveT = stats(live);
    const replayT = stats(replay);
    return {
      node, help, bundled: bundleFresh(), live: liveT, replay: replayT, replayOfLive: replayT.medianMs / liveT.medianMs,
      liveRssMiB: rssKiB / 1024, loaded,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Peak RSS of the workshop train-loop (`iterations`, default 30), one whole process with its
 * default settings (4 tasks x G = 8, held-out evaluation before and after).
 */
export function benchTrainLoopMemory(options: { model: string; iterations?: number }): TrainLoopMemoryResult {
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-bench-train-'));
  const iterations = options.iterations ?? 30;
  try {
    const r = runNode([BIN, 'train-loop', 'examples/workshop-learn.yaml', '--dataset', 'learn-team', '--roles', 'planner,solver',
      '--model', options.model, '--iterations', String(iterations), '--db', path.join(dir, 'train.db'), '--json'], { probe: 'rss' });
    return { iterations, seconds: r.ms / 1000, rssMiB: (r.rssKiB ?? 0) / 1024 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
