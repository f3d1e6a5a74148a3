/**
 * `npm run soak`: kill-at-random. Starts `flowlab run`, `flowlab rollouts`, `flowlab train-loop`
 * and the browser host (`flowlab serve`, with a run or a train loop started through its API) on
 * the tiny stories260K model, SIGKILLs each at a random moment (train loops also at a random named
 * point of core/killPoint.ts), resumes what was interrupted (`flowlab resume`, or the host's
 * `resumeRun` after a restart) and checks the store and the versions folders:
 *
 * - lost: a planned task without a stored run, an experiment or loop that does not reach
 *   `completed`, a train loop short of its planned iterations;
 * - duplicated: a task stored twice, two experiments for one loop iteration or held-out phase,
 *   two versions of one role for one loop iteration;
 * - orphan files: temp files (`*.tmp`) or version files no recorded version points at;
 * - per interrupted train loop: resumed to its planned iteration count with an unbroken lineage
 *   (each role's versions 1..N, each the parent of the next).
 *
 * Prints the figures and exits 1 on any loss, duplicate, orphan or broken loop.
 *
 *   npm run soak -- [--kills 30] [--minutes 9] [--seed 1] [--keep] [--json]
 *
 * Each try gets its own database in a temp folder (removed unless --keep). Not part of `npm test`
 * (core/training/resume.test.ts holds the kill checks at chosen points).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openStore, type SqliteStore } from '../core/store/index.ts';
import { mulberry32 } from '../core/random.ts';
import { loopDebris } from '../core/training/index.ts';
import { loopPlanOf } from '../core/experiments/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SHARED = path.resolve(process.env['FLOWLAB_SHARED'] ?? path.join(ROOT, '../shared'));
const MODEL = path.join(SHARED, 'models', 'stories260K.gguf');
const WORKFLOW = 'examples/learn-word.yaml';
const POINTS = ['gguf-temp-written', 'version-file-written', 'rollouts-done', 'rollout-stored', 'iteration-committed'];
const SCENARIOS = ['run', 'rollouts', 'train-loop', 'serve'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Tally {
  tried: number;
  killed: number;
  /** Killed with something stored, then resumed to the end. */
  resumed: number;
  lost: number;
  duplicated: number;
  orphans: number;
}
interface LoopCheck {
  scenario: Scenario;
  loopId: string;
  planned: number;
  done: number;
  lineage: boolean;
}

function args(argv: string[]): { kills: number; minutes: number; seed: number; keep: boolean; json: boolean } {
  const o = { kills: 30, minutes: 9, seed: 1, keep: false, json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v <= 0) throw new Error(`soak: ${a} needs a positive number`);
      return v;
    };
    if (a === '--kills') o.kills = Math.floor(num());
    else if (a === '--minutes') o.minutes = num();
    else if (a === '--seed') o.seed = Math.floor(num());
    else if (a === '--keep') o.keep = true;
    else if (a === '--json') o.json = true;
    else throw new Error(`soak: unknown flag ${a} (flags: --kills N, --minutes M, --seed S, --keep, --json)`);
  }
  return o;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function flowlab(argv: string[], env: Record<string, string> = {}): ChildProcess {
  const e: NodeJS.ProcessEnv = { ...process.env, FLOWLAB_SHARED: SHARED, ...env };
  if (!env['FLOWLAB_TEST_KILL_AT']) delete e['FLOWLAB_TEST_KILL_AT'];
  // Its own process group: `train-loop` runs in a child of bin/flowlab.js (a glibc malloc setting),
  // and a kill must take both, as a terminal's or the system's kill of the job would.
  return spawn(process.execPath, [path.join(ROOT, 'bin/flowlab.js'), ...argv], { cwd: ROOT, env: e, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
}

/** SIGKILLs the process group of `child`; false when it had exited. */
function killGroup(child: ChildProcess): boolean {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return false;
  try {
    process.kill(-child.pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits for `child` to exit; SIGKILLs its group `killMs` after `armed()` first holds (polled every
 * 100 ms; default: at once). Resolves with whether the kill landed, the exit code, the ms from
 * the start to the exit, the output.
 */
function follow(child: ChildProcess, killMs?: number, armed: () => boolean = () => true, timeoutMs = 300_000): Promise<{ killed: boolean; code: number | null; ms: number; armedMs: number; out: string; err: string }> {
  const t0 = Date.now();
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (err += d));
  return new Promise((resolve) => {
    let killed = false;
    let timer: NodeJS.Timeout | undefined;
    let armedAt = Date.now();
    const arm = () => {
      if (killMs === undefined) return;
      if (!armed()) {
        timer = setTimeout(arm, 100);
        return;
      }
      armedAt = Date.now();
      timer = setTimeout(() => {
        killed = killGroup(child);
      }, killMs);
    };
    arm();
    const guard = setTimeout(() => killGroup(child), timeoutMs);
    child.on('exit', (code, signal) => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL'); // anything of the group still alive (a killed wrapper's child)
        } catch {
          // the group is gone
        }
      }
      clearTimeout(timer);
      clearTimeout(guard);
      // A moment for the killed group's processes to be gone (their pids read as dead) before a resume looks.
      setTimeout(() => resolve({ killed: killed || signal === 'SIGKILL', code, ms: Date.now() - t0, armedMs: Date.now() - armedAt, out, err }), killed || signal ? 500 : 0);
    });
  });
}

/** Checks one database after its resumes: every experiment complete with one run per task; every loop whole, its files recorded. */
function check(store: SqliteStore, scenario: Scenario, t: Tally, loops: LoopCheck[], problems: string[]): void {
  for (const e of store.listExperiments()) {
    const tasks = store.listTasks(e.id).length;
    const indexes = store.listRuns(e.id).map((r) => r.taskIndex);
    const runs = [...new Set(indexes)];
    const dup = indexes.length - runs.length;
    if (dup) {
      t.duplicated += dup;
      problems.push(`${scenario}: ${e.id} has ${dup} task(s) stored twice`);
    }
    if (runs.length < tasks || e.status !== 'completed') {
      t.lost += tasks - runs.length || 1;
      problems.push(`${scenario}: ${e.id} is ${e.status} with ${runs.length}/${tasks} runs`);
    }
  }
  for (const loop of store.trainLoops.list()) {
    const exps = store.trainLoops.experimentsOf(loop.id);
    const keys = exps.map((e) => e.phase ?? `it${e.iteration}`);
    const dupExps = keys.length - new Set(keys).size;
    if (dupExps) {
      t.duplicated += dupExps;
      problems.push(`${scenario}: loop ${loop.id} has ${dupExps} duplicate experiment(s): ${keys.join(' ')}`);
    }
    const versions = store.weights.list().filter((v) => v.hyper['loopId'] === loop.id);
    let lineage = true;
    const plan = loopPlanOf(loop);
    for (const role of plan.roles) {
      const chain = versions.filter((v) => v.role === role);
      const its = chain.map((v) => v.iteration);
      const dupV = its.length - new Set(its).size;
      if (dupV) {
        t.duplicated += dupV;
        problems.push(`${scenario}: loop ${loop.id} role ${role} has ${dupV} duplicate version(s)`);
      }
      const whole = its.length === loop.iterations && its.every((k, i) => k === i + 1) && chain.every((v, i) => (i === 0 ? v.parentId === undefined : v.parentId === chain[i - 1]!.id));
      if (!whole) {
        lineage = false;
        problems.push(`${scenario}: loop ${loop.id} role ${role}: versions of iterations [${its.join(',')}] with parents broken or missing`);
      }
    }
    if (loop.status !== 'completed' || loop.done !== loop.iterations) {
      t.lost += loop.iterations - loop.done || 1;
      problems.push(`${scenario}: loop ${loop.id} is ${loop.status} at ${loop.done}/${loop.iterations}`);
    }
    const debris = loopDebris(loop.versionsDir, loop.id, new Set(versions.map((v) => path.resolve(v.path))));
    const orphans = debris.temps.length + debris.unrecorded.length;
    if (orphans) {
      t.orphans += orphans;
      problems.push(`${scenario}: loop ${loop.id} left ${[...debris.temps, ...debris.unrecorded].join(', ')}`);
    }
    loops.push({ scenario, loopId: loop.id, planned: loop.iterations, done: loop.done, lineage });
  }
}

/** Temp files under `dir` outside the loop folders `check` counts (a run or the host writes none). */
function strayTemps(dir: string, loopDirs: Set<string>): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) {
        if (!loopDirs.has(p)) walk(p);
      } else if (name.endsWith('.tmp')) out.push(p);
    }
  };
  walk(dir);
  return out;
}

const CLI_ARGS: Record<Exclude<Scenario, 'serve'>, (db: string) => string[]> = {
  run: (db) => ['run', WORKFLOW, '--dataset', 'learn-word', '--split', 'train', '--limit', '24', '--model', MODEL, '--threads', '1', '--db', db],
  rollouts: (db) => ['rollouts', WORKFLOW, '--dataset', 'learn-word', '--split', 'train', '--limit', '4', '--group', '8', '--model', MODEL, '--threads', '1', '--db', db],
  'train-loop': (db) => ['train-loop', WORKFLOW, '--dataset', 'learn-word', '--iterations', '3', '--limit', '2', '--group', '4', '--heldout', '2', '--heldout-samples', '1', '--model', MODEL, '--threads', '1', '--db', db],
};

/** Whether the database has an experiment or a train loop yet (read-only, no store opened). */
function hasRecords(db: string): boolean {
  if (!existsSync(db)) return false;
  try {
    const conn = new Database(db, { readonly: true, fileMustExist: true });
    try {
      return (conn.prepare('SELECT COUNT(*) FROM experiments').pluck().get() as number) > 0;
    } finally {
      conn.close();
    }
  } catch {
    return false; // not created or migrated yet
  }
}

/** What is left to resume in a database: unfinished experiments not of a loop, and unfinished loops. */
function leftToResume(db: string): string[] {
  if (!existsSync(db)) return [];
  const store = openStore(db);
  try {
    const loops = store.trainLoops.list().filter((l) => l.status !== 'completed');
    const inLoop = new Set(store.trainLoops.list().flatMap((l) => store.trainLoops.experimentsOf(l.id).map((e) => e.id as string)));
    const exps = store.listExperiments().filter((e) => e.status !== 'completed' && !inLoop.has(e.id));
    return [...loops.map((l) => l.id), ...exps.map((e) => e.id as string)];
  } finally {
    store.close();
  }
}

/** Starts `flowlab serve` on a free port; resolves with its base URL and token once it listens. */
async function serve(db: string): Promise<{ child: ChildProcess; url: string; token: string }> {
  const child = flowlab(['serve', '--port', '0', '--db', db, '--models', path.dirname(MODEL)]);
  let out = '';
  const found = await new Promise<RegExpExecArray | null>((resolve) => {
    const t = setTimeout(() => resolve(null), 120_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /(http:\/\/[^\s/]+)\/\?token=([0-9a-f]+)/.exec(out);
      if (m) (clearTimeout(t), resolve(m));
    });
    child.on('exit', () => resolve(null));
  });
  if (!found) throw new Error(`soak: flowlab serve did not start: ${out}`);
  return { child, url: found[1]!, token: found[2]! };
}

async function api(base: { url: string; token: string }, method: string, payload: unknown): Promise<{ ok: boolean; result?: Record<string, unknown>; error?: { code: string; message: string } }> {
  const res = await fetch(`${base.url}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-flowlab-token': base.token }, body: JSON.stringify(payload) });
  return (await res.json()) as { ok: boolean };
}

/** Polls until every experiment and loop of `db` is completed (or `ms` pass). */
async function settled(db: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const store = openStore(db, { markInterrupted: false });
    try {
      const open = store.listExperiments().some((e) => e.status !== 'completed') || store.trainLoops.list().some((l) => l.status !== 'completed');
      if (!open) return;
    } finally {
      store.close();
    }
    await sleep(500);
  }
}

async function main(): Promise<number> {
  const o = args(process.argv.slice(2));
  if (!existsSync(MODEL)) throw new Error(`soak: the tiny model is missing: ${MODEL} (set FLOWLAB_SHARED)`);
  const rand = mulberry32(o.seed);
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-soak-'));
  const tally = Object.fromEntries(SCENARIOS.map((s) => [s, { tried: 0, killed: 0, resumed: 0, lost: 0, duplicated: 0, orphans: 0 }])) as Record<Scenario, Tally>;
  const window: Record<Scenario, number> = { run: 4000, rollouts: 4000, 'train-loop': 10000, serve: 4000 };
  const loops: LoopCheck[] = [];
  const problems: string[] = [];
  const t0 = Date.now();
  let kills = 0;
  let i = 0;
  const log = (s: string) => process.stderr.write(s + '\n');
  while (kills < o.kills && Date.now() - t0 < o.minutes * 60_000) {
    const scenario = SCENARIOS[i % SCENARIOS.length]!;
    const tryDir = path.join(dir, `${String(i).padStart(3, '0')}-${scenario}`);
    mkdirSync(tryDir);
    const db = path.join(tryDir, 'flowlab.db');
    i++;
    const t = tally[scenario];
    t.tried++;
    const killMs = Math.round(100 + rand() * window[scenario]);
    let killed = false;
    let how: string | undefined;
    if (scenario === 'serve') {
      const host = await serve(db);
      const loop = i % 8 === 0; // every other serve try (they come every 4th) starts a train loop
      const started = loop
        ? await api(host, 'startTrainLoop', { workflowText: await readText(WORKFLOW), dataset: 'learn-word', models: { default: MODEL }, iterations: 3, group: 4, limit: 2, heldout: 2, heldoutSamples: 1, threads: 1 })
        : await api(host, 'startRun', { workflowText: await readText(WORKFLOW), dataset: 'learn-word', split: 'train', limit: 24, seed: 0, models: { default: MODEL }, threads: 1 });
      if (!started.ok) problems.push(`serve: ${loop ? 'startTrainLoop' : 'startRun'} failed: ${started.error?.message}`);
      const r = await follow(host.child, killMs);
      killed = r.killed;
      const left = leftToResume(db);
      if (!left.length) window.serve = Math.max(1000, window.serve * 0.7); // it had ended: aim earlier next time
      if (left.length) {
        const again = await serve(db);
        for (const id of left) {
          const res = await api(again, 'resumeRun', { experimentId: id });
          if (!res.ok) problems.push(`serve: resumeRun ${id} failed: ${res.error?.message}`);
        }
        await settled(db, 300_000);
        again.child.kill('SIGINT');
        await follow(again.child, 20_000);
        t.resumed += killed ? 1 : 0;
      }
    } else {
      const point = scenario === 'train-loop' && rand() < 0.5 ? `${POINTS[Math.floor(rand() * POINTS.length)]}@${1 + Math.floor(rand() * 3)}` : undefined;
      // One kill in five at any moment from the start (model loading included), the others once something is stored.
      const fromStart = rand() < 0.2;
      const r = await follow(flowlab(CLI_ARGS[scenario](db), point ? { FLOWLAB_TEST_KILL_AT: point } : {}), point ? undefined : killMs, fromStart ? undefined : () => hasRecords(db));
      killed = r.killed;
      if (point) how = `killed at ${point}`;
      if (!killed && !point) window[scenario] = Math.max(300, r.armedMs * 0.9); // it ended first: aim earlier next time
      if (!killed && r.code !== 0) problems.push(`${scenario}: exited ${r.code} without a kill: ${r.err.slice(-400)}`);
      if (killed && !point && !leftToResume(db).length && hasRecords(db)) window[scenario] = Math.max(300, window[scenario] * 0.7); // it had just ended: aim earlier
      for (let round = 0; round < 3; round++) {
        const left = leftToResume(db);
        if (!left.length) break;
        // A train loop's resume is itself killed once in a while (a second kill of the same loop).
        const killAgain = scenario === 'train-loop' && round === 0 && rand() < 0.3 && kills + 1 < o.kills;
        for (const id of left) {
          const res = await follow(flowlab(['resume', id, '--db', db]), killAgain ? Math.round(1000 + rand() * window[scenario]) : undefined);
          if (res.killed) {
            how = `${how ?? `killed at ${killMs} ms`}, its resume killed again`;
            kills++;
            t.killed++;
            t.tried++;
          } else if (res.code !== 0) problems.push(`${scenario}: resume ${id} exited ${res.code}: ${res.err.slice(-400)}`);
        }
        if (round === 0 && killed) t.resumed++;
      }
    }
    if (killed) {
      kills++;
      t.killed++;
    }
    if (existsSync(db)) {
      const store = openStore(db);
      try {
        check(store, scenario, t, loops, problems);
        const loopDirs = new Set(store.trainLoops.list().map((l) => path.join(l.versionsDir, l.id)));
        const stray = strayTemps(dir, loopDirs).filter((f) => path.basename(f).startsWith(path.basename(db)) || f.includes(`${path.basename(db)}`));
        if (stray.length) {
      t.orphans += stray.length;
      problems.push(`${scenario}: stray temp files ${stray.join(', ')}`);
    }
      } finally {
        store.close();
      }
    }
    log(`soak ${String(i).padStart(3)} ${scenario.padEnd(10)} ${killed ? (how ?? `killed at ${killMs} ms`) : 'ended before the kill'}; ${kills}/${o.kills} kills, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  const seconds = (Date.now() - t0) / 1000;
  const total = SCENARIOS.reduce((a, s) => ({ tried: a.tried + tally[s].tried, killed: a.killed + tally[s].killed, resumed: a.resumed + tally[s].resumed, lost: a.lost + tally[s].lost, duplicated: a.duplicated + tally[s].duplicated, orphans: a.orphans + tally[s].orphans }), { tried: 0, killed: 0, resumed: 0, lost: 0, duplicated: 0, orphans: 0 });
  const interrupted = loops.filter((l) => l.planned > 0);
  const whole = interrupted.filter((l) => l.done === l.planned && l.lineage);
  if (o.json) process.stdout.write(JSON.stringify({ seconds, kills, total, tally, loops, problems }) + '\n');
  else {
    const row = (name: string, x: Tally) => `${name.padEnd(11)} ${[x.tried, x.killed, x.resumed, x.lost, x.duplicated, x.orphans].map((n) => String(n).padStart(8)).join('')}`;
    process.stdout.write([
      `Soak: ${kills} kills in ${seconds.toFixed(0)} s (seed ${o.seed})`,
      `${'scenario'.padEnd(11)} ${['tried', 'killed', 'resumed', 'lost', 'dup', 'orphans'].map((h) => h.padStart(8)).join('')}`,
      ...SCENARIOS.map((s) => row(s, tally[s])),
      row('total', total),
      `train loops: ${whole.length} of ${interrupted.length} at their planned iteration count with an unbroken lineage`,
      ...problems.map((p) => `PROBLEM ${p}`),
      '',
    ].join('\n'));
  }
  if (!o.keep) rmSync(dir, { recursive: true, force: true });
  else process.stderr.write(`soak: kept ${dir}\n`);
  return total.lost || total.duplicated || total.orphans || whole.length !== interrupted.length || problems.length ? 1 : 0;
}

async function readText(file: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return readFile(path.join(ROOT, file), 'utf8');
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(2);
  },
);
