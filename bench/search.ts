/**
 * Run search benchmark (issue 29, "find any run"): a database of 100,000 runs (100 experiments of
 * 1,000 runs; each run three agent nodes, planner, solver and verifier, one model call each, so
 * 300,000 node events and 300,000 calls; SIMULATED text drawn from a 400-word vocabulary with a
 * seeded generator, about 1 run in 5 with a root failure blamed on one of the three roles) and the
 * query "runs of one experiment blamed on one role containing a word in a completion":
 * - `Store.searchRuns` (what `flowlab ls` and the Runs table call: FTS5, then the page decoded);
 * - the same query as bare SQL on the same connection (no store layer, ids only);
 * - the same query as bare SQL without the index (`LIKE '%word%'` over the completions), the
 *   baseline the index is measured against;
 * - the word over all 100,000 runs (no experiment, no role): the largest match set;
 * - `flowlab ls` as a whole process (start-up included), for information.
 * Median of `repeats` after one warm-up. Every variant must return the same ids (checked).
 * Runs alone with `npx tsx bench/search.ts`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asNodeId, asRoleName, asRunId, HUMAN } from '../core/ids.ts';
import { mulberry32 } from '../core/random.ts';
import { computeWorkflowHash, openStore, type RunWithEvents, type Store } from '../core/store/index.ts';
import type { NodeEvent } from '../core/trace/index.ts';
import type { RunRecord } from '../core/results/index.ts';

export interface SearchBenchResult {
  runs: number;
  experiments: number;
  /** Seconds to write the database (saveRuns in batches of 1,000, index included). */
  buildSeconds: number;
  /** The word searched, and the share of runs whose completions contain it. */
  word: string;
  wordShare: number;
  /** Matching runs of the measured query. */
  matches: number;
  /** Median ms: Store.searchRuns, bare FTS SQL, bare SQL without the index (LIKE), the word over all runs. */
  storeMs: number;
  bareMs: number;
  likeMs: number;
  allRunsMs: number;
  allRunsMatches: number;
  /** Median ms of counting the same word's runs over all runs with LIKE (no index). */
  allRunsLikeMs: number;
  /** Median ms of `flowlab ls <exp> --blamed <role> --search <word> --in completion --json` as a whole process. */
  cliMs: number | null;
}

const ROLES = ['planner', 'solver', 'verifier'] as const;
const WORD = 'durian';

/** A vocabulary of 400 made-up lower-case words (the searched word is not among them). */
function vocabulary(): string[] {
  const syll = ['ka', 'lo', 'mi', 're', 'su', 'ta', 'no', 've', 'pi', 'zu', 'ba', 'de', 'fo', 'gu', 'hi', 'ja', 'ko', 'lu', 'ma', 'ne'];
  const out: string[] = [];
  for (const a of syll) for (const b of syll) out.push(a + b);
  return out;
}

function makeExperimentRuns(exp: string, n: number, rand: () => number, words: string[], t0: number): RunWithEvents[] {
  const sentence = (k: number, withWord: boolean) => {
    const w = Array.from({ length: k }, () => words[Math.floor(rand() * words.length)]!);
    if (withWord) w[Math.floor(rand() * k)] = WORD;
    return w.join(' ');
  };
  const batch: RunWithEvents[] = [];
  for (let i = 0; i < n; i++) {
    const runId = asRunId(`${exp}/${i}`);
    const failedRole = rand() < 0.2 ? ROLES[Math.floor(rand() * ROLES.length)]! : undefined;
    const startedAt = t0 + i * 1000;
    const events: NodeEvent[] = ROLES.map((role, seq) => {
      const completion = sentence(12, rand() < 0.1);
      const failed = role === failedRole;
      return {
        runId, nodeId: asNodeId(role), attempt: 1, seq, kind: 'agent', role: asRoleName(role), wiredBy: HUMAN, runBy: asRoleName(role),
        inputs: { question: `q${i}` }, ...(failed ? {} : { output: completion }),
        status: failed ? 'failed' : 'ok', ...(failed && { failureClass: 'execution' as const, errorCode: 'AGENT_ERROR', message: 'SIMULATED' }),
        calls: [{
          callIndex: 0, role: asRoleName(role), modelRef: 'default', model: 'simulated', prompt: `You are the ${role}. ${sentence(30, false)}`,
          params: { temperature: 0, maxTokens: 64 }, seed: i, completion, promptTokens: 40, completionTokens: 12, ms: 1, startedAt,
        }],
        startedAt, endedAt: startedAt + 10,
      };
    });
    const run: RunRecord = {
      runId, experimentId: exp as RunRecord['experimentId'], taskIndex: i, taskId: `t${i}`, status: failedRole ? 'failed' : 'completed',
      ...(failedRole ? {} : { answer: '4' }), expected: '4', score: failedRole ? 0 : 1, correct: !failedRole, seed: i,
      promptTokens: 120, completionTokens: 36, startedAt, endedAt: startedAt + 30, failures: failedRole ? { execution: 1 } : {}, simulated: true,
      ...(failedRole && {
        credit: {
          roots: [{ nodeId: asNodeId(failedRole), failureClass: 'execution' as const, errorCode: 'AGENT_ERROR', blamed: asRoleName(failedRole), simulated: true }],
          cascades: [], byRole: {}, ambiguous: [], infrastructure: [], silent: false,
        },
      }),
    };
    batch.push({ run, events });
  }
  return batch;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function time<T>(repeats: number, f: () => T): { ms: number; value: T } {
  let value = f(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    value = f();
    ms.push(performance.now() - t);
  }
  return { ms: median(ms), value };
}

/**
 * Writes `nExp` blame-eval experiments `exp-bench-000`.. of `perExp` runs each into `store` (the
 * benchmark's SIMULATED runs, described at the top of this file; seeded, so the same every time).
 */
export function seedSearchRuns(store: Store, nExp: number, perExp: number): void {
  const rand = mulberry32(29);
  const words = vocabulary();
  const yaml = 'name: bench-search\nsteps: []\n';
  for (let x = 0; x < nExp; x++) {
    const id = `exp-bench-${String(x).padStart(3, '0')}`;
    store.createExperiment({
      id, kind: 'blame-eval', workflowName: 'bench-search', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml), dataset: 'gsm8k', split: 'test', seed: 0,
      config: { models: { models: { default: 'simulated.gguf' } } },
      tasks: Array.from({ length: perExp }, (_, i) => ({ taskIndex: i, taskId: `t${i}`, input: { question: `q${i}` }, expected: '4' })),
    });
    store.saveRuns(makeExperimentRuns(id, perExp, rand, words, 1_700_000_000_000 + x * perExp * 1000));
    store.finishExperiment(id, 'completed');
  }
}

/** The word the benchmark searches for (in about 1 completion in 10). */
export const SEARCH_WORD = WORD;

export async function benchSearch(options: { experiments?: number; runsPerExperiment?: number; repeats?: number } = {}): Promise<SearchBenchResult> {
  const nExp = options.experiments ?? 100;
  const perExp = options.runsPerExperiment ?? 1000;
  const repeats = options.repeats ?? 15;
  const dir = mkdtempSync(join(tmpdir(), 'flowlab-bench-search-'));
  const file = join(dir, 'search.db');
  try {
    const store = openStore(file);
    const t0 = performance.now();
    seedSearchRuns(store, nExp, perExp);
    const buildSeconds = (performance.now() - t0) / 1000;
    const exp = `exp-bench-${String(Math.floor(nExp / 2)).padStart(3, '0')}`;
    const role = 'solver';
    const q = { experimentId: exp, blamed: role, text: WORD, field: 'completion' as const, sort: 'task' as const, limit: 1000 };
    const viaStore = time(repeats, () => store.searchRuns(q));
    const db = (store as unknown as { db: import('better-sqlite3').Database }).db;
    const bare = db.prepare(`SELECT r.id FROM runs r WHERE r.experiment_id = ?
      AND EXISTS (SELECT 1 FROM run_blame b WHERE b.run_id = r.id AND b.role = ?)
      AND EXISTS (SELECT 1 FROM run_docs d WHERE d.run_id = r.id AND +d.doc IN (SELECT rowid FROM run_fts WHERE run_fts MATCH ?))
      ORDER BY r.task_index`).pluck();
    const viaBare = time(repeats, () => bare.all(exp, role, `completion : "${WORD}"`) as string[]);
    const like = db.prepare(`SELECT r.id FROM runs r WHERE r.experiment_id = ?
      AND EXISTS (SELECT 1 FROM run_blame b WHERE b.run_id = r.id AND b.role = ?)
      AND EXISTS (SELECT 1 FROM node_events e JOIN model_calls c ON c.node_event_id = e.id WHERE e.run_id = r.id AND c.completion LIKE ?)
      ORDER BY r.task_index`).pluck();
    const viaLike = time(repeats, () => like.all(exp, role, `%${WORD}%`) as string[]);
    const want = viaStore.value.rows.map((r) => r.runId as string);
    if (JSON.stringify(want) !== JSON.stringify(viaBare.value) || JSON.stringify(want) !== JSON.stringify(viaLike.value)) {
      throw new Error(`bench/search: the variants disagree: store ${want.length}, bare ${viaBare.value.length}, like ${viaLike.value.length}`);
    }
    const all = time(Math.max(3, Math.floor(repeats / 3)), () => store.searchRuns({ text: WORD, field: 'completion', limit: 100 }));
    const likeAllSql = db.prepare(`SELECT count(*) FROM runs r WHERE EXISTS (SELECT 1 FROM node_events e JOIN model_calls c ON c.node_event_id = e.id WHERE e.run_id = r.id AND c.completion LIKE ?)`).pluck();
    const likeAll = time(2, () => likeAllSql.get(`%${WORD}%`) as number);
    if (likeAll.value !== all.value.total) throw new Error(`bench/search: LIKE over all runs found ${likeAll.value}, the store ${all.value.total}`);
    const withWord = db.prepare(`SELECT count(*) FROM run_fts WHERE run_fts MATCH ?`).pluck().get(`completion : "${WORD}"`) as number;
    store.close();
    let cliMs: number | null = null;
    const bin = join(process.cwd(), 'bin/flowlab.js');
    const cli: number[] = [];
    for (let i = 0; i < 4; i++) {
      const t = performance.now();
      const r = spawnSync(process.execPath, [bin, 'ls', exp, '--blamed', role, '--search', WORD, '--in', 'completion', '--json', '--db', file], { encoding: 'utf8' });
      if (r.status !== 0) {
        cli.length = 0;
        break;
      }
      if (i > 0) cli.push(performance.now() - t);
    }
    if (cli.length) cliMs = median(cli);
    return {
      runs: nExp * perExp, experiments: nExp, buildSeconds, word: WORD, wordShare: withWord / (nExp * perExp), matches: want.length,
      storeMs: viaStore.ms, bareMs: viaBare.ms, likeMs: viaLike.ms, allRunsMs: all.ms, allRunsMatches: all.value.total, allRunsLikeMs: likeAll.ms, cliMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench's lines for `r` (bench/index.ts prints them). */
export function searchLines(r: SearchBenchResult): string[] {
  const f = (ms: number) => `${ms.toFixed(1).padStart(7)} ms`;
  const ok = (pass: boolean) => (pass ? 'OK' : 'MISSED');
  return [
    `search   ${r.runs.toLocaleString('en')} runs in ${r.experiments} experiments (900,000 rows of events and calls; SIMULATED text), built in ${r.buildSeconds.toFixed(0)} s; "${r.word}" in the completions of ${(100 * r.wordShare).toFixed(1)}% of runs`,
    `  query: runs of one experiment blamed on solver with "${r.word}" in a completion -> ${r.matches} runs (median)`,
    `  Store.searchRuns  ${f(r.storeMs)}   goal < 200 ms   ${ok(r.storeMs < 200)}   (what flowlab ls and the Runs table call: count + page decoded)`,
    `  bare SQL, FTS5    ${f(r.bareMs)}   (baseline: the same query's ids, no store layer, FTS hits as a lookup table)`,
    `  bare SQL, LIKE    ${f(r.likeMs)}   (baseline: no index, LIKE '%${r.word}%' over the completions)`,
    `  word, all runs    ${f(r.allRunsMs)}   ${r.allRunsMatches.toLocaleString('en')} matches, count + first page of 100 (Store.searchRuns)`,
    `  same, bare LIKE   ${f(r.allRunsLikeMs)}   (baseline: the count alone, no index)`,
    r.cliMs === null ? '  flowlab ls        (not measured: the CLI failed)' : `  flowlab ls        ${f(r.cliMs)}   (whole process, start-up included, --json)`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of searchLines(await benchSearch())) console.log(line);
}
