/**
 * Runs one corpus entry (test/corpus/types.ts) and judges it: the expected code, a message that
 * names the file or field and the place, no crash (an error that is not a typed `FlowlabError`,
 * a stack trace or a raw runtime message in what the user sees), no hang (under `LIMIT_MS`), and
 * no row changed in the seeded database nor a byte in any database file the entry was given.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { main } from '../../cli/main.ts';
import { FlowlabError } from '../../core/errors.ts';
import { openStore } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { loadWorkflowFile, SpecError } from '../../core/workflow/index.ts';
import { readGguf } from '../../models/gguf/readGguf.ts';
import { readCheckedGgufInfo } from '../../models/llama/index.ts';
import { capture, newExperiment, nodeEvents, runRecord } from '../fixtures.ts';
import { fill, type ApiEntry, type CliEntry, type CorpusEntry, type Ctx, type GgufEntry, type WorkflowEntry } from './types.ts';

/** Each entry's time limit, ms (generous for a loaded 2-core machine; a typical entry takes a few ms). */
export const LIMIT_MS = 15_000;

/** What the user would see that marks a crash rather than a clear error. */
const CRASH_MARKS = /\n\s+at |TypeError|ReferenceError|RangeError|Maximum call stack|Cannot read properties|undefined is not|\[object Object\]|Node\.js v\d/;

export interface Outcome {
  id: string;
  ms: number;
  /** A typed error with the expected code, naming its place. */
  clear: boolean;
  crashed: boolean;
  hung: boolean;
  rowsChanged: boolean;
  /** Why the entry did not pass (empty when it did). */
  problems: string[];
}

/** A store with one experiment and one run in it: what `{db}` points at. */
export function seedDatabase(file: string): void {
  const store = openStore(file);
  const exp = store.createExperiment(newExperiment());
  const run = runRecord(exp.id, 0);
  store.saveRun(run, nodeEvents(run));
  store.close();
}

/** Every row of every table (or the bytes, for a file that is not SQLite), hashed. */
export function snapshot(file: string): string {
  if (!existsSync(file)) return 'absent';
  const h = createHash('sha256');
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      for (const t of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all() as string[]) {
        h.update(t);
        for (const row of db.prepare(`SELECT * FROM "${t}"`).raw().all()) h.update(JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? String(v) : Buffer.isBuffer(v) ? v.toString('hex') : v)));
      }
    } finally {
      db.close();
    }
  } catch {
    h.update(readFileSync(file));
  }
  return h.digest('hex');
}

/** Runs `fn` under the time limit: `undefined` when it did not settle in time. */
async function timed<T>(fn: () => Promise<T>): Promise<{ value?: T; error?: unknown; hung: boolean; ms: number }> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), LIMIT_MS)));
  try {
    const r = await Promise.race([fn().then((value) => ({ value }), (error: unknown) => ({ error })), limit]);
    if (r === 'hung') return { hung: true, ms: performance.now() - t0 };
    return { ...r, hung: false, ms: performance.now() - t0 };
  } finally {
    clearTimeout(timer);
  }
}

async function writeFiles(entry: CliEntry, ctx: Ctx): Promise<string[]> {
  const dbs: string[] = [];
  for (const [name, content] of Object.entries(entry.files ?? {})) {
    const file = path.join(ctx.dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    const bytes = typeof content === 'function' ? await content(ctx) : content;
    writeFileSync(file, typeof bytes === 'string' ? fill(bytes, ctx) : bytes);
    if (name.endsWith('.db')) dbs.push(file);
  }
  return dbs;
}

/** Judges a thrown error: a FlowlabError with `code` whose message names every part of `place`. */
function judgeError(err: unknown, code: string, place: string[], problems: string[]): { crashed: boolean } {
  if (!(err instanceof FlowlabError)) {
    problems.push(`not a typed error: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    return { crashed: true };
  }
  const codes = err instanceof SpecError ? err.issues.map((i) => i.code) : [err.code];
  if (!codes.includes(code)) problems.push(`code ${codes.join(', ')}, expected ${code}`);
  for (const p of place) if (!err.message.includes(p)) problems.push(`message does not name ${JSON.stringify(p)}: ${err.message.slice(0, 300)}`);
  if (CRASH_MARKS.test(err.message)) problems.push(`message reads like a crash: ${err.message.slice(0, 300)}`);
  return { crashed: false };
}

async function runWorkflow(e: WorkflowEntry, ctx: Ctx, problems: string[]) {
  const file = path.join(ctx.dir, 'workflow.yaml');
  writeFileSync(file, e.bytes);
  const r = await timed(async () => loadWorkflowFile(file, { tools: defaultTools() }));
  let crashed = false;
  if (!r.hung) {
    if (r.error === undefined) problems.push('accepted');
    else {
      crashed = judgeError(r.error, e.code, [file], problems).crashed;
      if (r.error instanceof SpecError) {
        const issue = r.error.issues.find((i) => i.code === e.code && (e.line === undefined || i.line === e.line));
        if (!issue) problems.push(`no ${e.code} issue${e.line ? ` at line ${e.line}` : ''}: ${JSON.stringify(r.error.issues.map((i) => [i.code, i.line]))}`);
        else if (issue.file !== file || issue.line === undefined) problems.push(`issue not located: file ${issue.file}, line ${issue.line}`);
      }
    }
  }
  return { ...r, crashed };
}

async function runCli(e: CliEntry, ctx: Ctx, problems: string[]) {
  const io = capture();
  const r = await timed(() => main(e.argv.map((a) => fill(a, ctx)), io));
  let crashed = false;
  if (!r.hung) {
    if (r.error !== undefined) {
      crashed = true;
      problems.push(`main threw: ${String(r.error)}`);
    } else {
      const want = e.exit ?? 1;
      if (r.value !== want) problems.push(`exit ${r.value}, expected ${want}`);
      if (e.code !== 'USAGE' && !io.err.includes(`[${e.code}]`)) problems.push(`stderr lacks [${e.code}]`);
      const place = fill(e.place, ctx);
      if (!io.err.includes(place)) problems.push(`stderr does not name ${JSON.stringify(place)}`);
      if (CRASH_MARKS.test(io.err)) {
        crashed = true;
        problems.push('stderr reads like a crash');
      }
      if (problems.length) problems.push(`stderr: ${io.err.split('\n').slice(0, 4).join(' | ').slice(0, 400)}`);
    }
  }
  return { ...r, crashed };
}

async function runGguf(e: GgufEntry, ctx: Ctx, problems: string[]) {
  const file = path.join(ctx.dir, 'model.gguf');
  writeFileSync(file, await e.make(ctx.model));
  const r = await timed((): Promise<unknown> => (e.reader === 'header' ? readGguf(file) : readCheckedGgufInfo(file)));
  let crashed = false;
  if (!r.hung) {
    if (r.error === undefined) problems.push('accepted');
    else crashed = judgeError(r.error, e.code, [file, ...(e.place ? [e.place] : [])], problems).crashed;
  }
  return { ...r, crashed };
}

/** The browser host the API entries talk to: its URL, token and lab folder; and serve-model's port. */
export interface Served {
  port: number;
  /** A `flowlab serve-model` server (its provider SIMULATED: the entries are refused before any generation). */
  modelPort?: number;
  token: string;
  dir: string;
}

async function runApi(e: ApiEntry, ctx: Ctx, served: Served, problems: string[]) {
  const body = e.raw !== undefined ? (typeof e.raw === 'string' ? e.raw : new Uint8Array(e.raw)) : JSON.stringify(e.payload, (_k, v) => (typeof v === 'string' ? fill(v, { ...ctx, dir: served.dir }) : v));
  const r = await timed(async () => {
    const url = e.target === 'model' ? `http://127.0.0.1:${served.modelPort}/v1/${e.method}` : `http://127.0.0.1:${served.port}/api/${e.method}`;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-flowlab-token': served.token, ...e.headers }, body });
    return { status: res.status, text: await res.text() };
  });
  let crashed = false;
  if (!r.hung) {
    if (r.error !== undefined) {
      crashed = true;
      problems.push(`request failed (the host died?): ${String(r.error)}`);
    } else {
      const { status, text } = r.value!;
      let error: { code?: string; field?: string; message?: string } | undefined;
      try {
        error = (JSON.parse(text) as { error?: typeof error }).error;
        if (e.target === 'model' && error) {
          // OpenAI's error object: {message, type, param, code}, nothing else.
          const o = error as { type?: string; param?: string | null };
          const keys = Object.keys(error).sort().join(',');
          if (keys !== 'code,message,param,type') problems.push(`not OpenAI's error shape: keys ${keys}`);
          error = { code: o.type, ...(o.param !== null && o.param !== undefined && { field: o.param }), ...(error.message !== undefined && { message: error.message }) };
        }
      } catch {
        problems.push(`reply is not JSON: ${text.slice(0, 200)}`);
      }
      if (status >= 500) crashed = true;
      if (status !== e.status) problems.push(`status ${status}, expected ${e.status}`);
      if (error?.code !== e.code) problems.push(`code ${error?.code}, expected ${e.code}`);
      if (e.field !== undefined && error?.field !== e.field) problems.push(`field ${error?.field}, expected ${e.field}`);
      const place = fill(e.place, { ...ctx, dir: served.dir });
      if (!error?.message?.includes(place)) problems.push(`message does not name ${JSON.stringify(place)}: ${error?.message?.slice(0, 300)}`);
      if (error?.message && CRASH_MARKS.test(error.message)) problems.push(`message reads like a crash: ${error.message.slice(0, 300)}`);
    }
  }
  return { ...r, crashed };
}

/**
 * Runs `entry` in `ctx.dir` (a fresh folder), `ctx.db` seeded; API entries go to `served`.
 * The caller counts the outcomes.
 */
export async function runEntry(entry: CorpusEntry, ctx: Ctx, served?: Served): Promise<Outcome> {
  const problems: string[] = [];
  const dbs = entry.via === 'cli' ? await writeFiles(entry, ctx) : [];
  const watched = [ctx.db, ...dbs, ...(entry.via === 'api' && served ? [path.join(served.dir, 'lab.db')] : [])];
  const before = watched.map(snapshot);
  let r: { hung: boolean; ms: number; crashed: boolean };
  if (entry.via === 'workflow') r = await runWorkflow(entry, ctx, problems);
  else if (entry.via === 'cli') r = await runCli(entry, ctx, problems);
  else if (entry.via === 'gguf') r = await runGguf(entry, ctx, problems);
  else r = await runApi(entry, ctx, served!, problems);
  if (r.hung) problems.push(`no answer within ${LIMIT_MS} ms`);
  const changed = watched.filter((f, i) => snapshot(f) !== before[i]);
  if (changed.length) problems.push(`rows changed in ${changed.join(', ')}`);
  return { id: entry.id, ms: r.ms, clear: !r.hung && !r.crashed && problems.length === 0, crashed: r.crashed, hung: r.hung, rowsChanged: changed.length > 0, problems };
}

/**
 * Runs a `cli` entry as a child process (`node bin/flowlab.js`, the built CLI when it is fresh):
 * the exit must be a status (no signal), the one expected, with the code and place on stderr.
 */
export async function spawnEntry(entry: CliEntry, ctx: Ctx, cli: (args: string[]) => Promise<{ code: number | null; err: string }>): Promise<Outcome> {
  const problems: string[] = [];
  const dbs = await writeFiles(entry, ctx);
  const watched = [ctx.db, ...dbs];
  const before = watched.map(snapshot);
  const r = await timed(() => cli(entry.argv.map((a) => fill(a, ctx))));
  let crashed = false;
  if (!r.hung) {
    const { code, err } = r.value!;
    if (code === null) {
      crashed = true;
      problems.push('ended by a signal');
    } else if (code !== (entry.exit ?? 1)) problems.push(`exit ${code}, expected ${entry.exit ?? 1}`);
    if (entry.code !== 'USAGE' && !err.includes(`[${entry.code}]`)) problems.push(`stderr lacks [${entry.code}]`);
    if (!err.includes(fill(entry.place, ctx))) problems.push(`stderr does not name ${fill(entry.place, ctx)}`);
    if (CRASH_MARKS.test(err)) {
      crashed = true;
      problems.push(`stderr reads like a crash: ${err.slice(0, 400)}`);
    }
  } else problems.push(`no exit within ${LIMIT_MS} ms`);
  const changed = watched.filter((f, i) => snapshot(f) !== before[i]);
  if (changed.length) problems.push(`rows changed in ${changed.join(', ')}`);
  return { id: `${entry.id} (spawned)`, ms: r.ms, clear: !r.hung && !crashed && problems.length === 0, crashed, hung: r.hung, rowsChanged: changed.length > 0, problems };
}
