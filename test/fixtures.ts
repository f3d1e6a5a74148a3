/**
 * The one test-fixture module: where the shared test material is, scratch folders, stores that
 * close themselves, and the hand-built records (runs, node events, model calls, role ladders,
 * experiments) that store, API and view tests share. Every builder takes `over` so a test states
 * only what it cares about; the defaults are plain, valid values.
 *
 * Tests split by cost (as node-llama-cpp's `test/standalone/` and `test/modelDependent/`):
 * a test that needs `haveShared` (the tiny GGUF models, the real datasets) lives in a
 * `*.model.test.ts` file; `npm run test:fast` runs everything else.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { ApiError, createHandlers, createRemoteApi, type FlowlabApi, type FlowlabClient, type LabEvent } from '../core/api/index.ts';
import { asExperimentId, asNodeId, asRoleName, asRunId, HUMAN } from '../core/ids.ts';
import { DEFAULT_WEIGHTS, type RoleLadder } from '../core/reward/index.ts';
import { computeWorkflowHash, openStore, type NewExperiment, type OpenStoreOptions, type SqliteStore, type Store } from '../core/store/index.ts';
import type { ModelCallRecord, NodeEvent } from '../core/trace/index.ts';
import type { RunRecord } from '../core/results/index.ts';
import type { LabHostHandle, LabHostOptions } from '../host/index.ts';

// ---------- the shared test material ----------

/** The shared folder (models/, data/): `$FLOWLAB_SHARED`, else `<cwd>/../shared`, absolute. */
export const shared = path.resolve(process.env.FLOWLAB_SHARED ?? path.join(process.cwd(), '../shared'));
/** A path inside the shared folder. */
export const sharedPath = (...parts: string[]): string => path.join(shared, ...parts);
/** The tiny real model (stories260K, 260K parameters) that model-dependent tests run. */
export const tinyModel = sharedPath('models/stories260K.gguf');
/** llama-2-tiny-random: F16 weights, a 32k vocabulary, 2 heads (GGUF and trainer parity tests). */
export const tinyRandomModel = sharedPath('models/llama-2-tiny-random.gguf');
/** GSM8K's test split, as the dataset loader reads it. */
export const gsm8kTest = sharedPath('data/gsm8k/test.jsonl');
/** Whether the tiny model and the GSM8K data are present (model-dependent tests skip otherwise). */
export const haveShared = existsSync(tinyModel) && existsSync(gsm8kTest);

/** Logs once that `what` is skipped because `missing` is absent (tests skip, they do not fail). */
export function noteSkip(tag: string, what: string, missing: string): void {
  console.log(`[${tag}] skipping ${what}: ${missing} not found (set FLOWLAB_SHARED to the shared folder)`);
}

// ---------- scratch folders and stores ----------

/** A fresh folder under the OS temp dir, named `flowlab-<tag>-XXXXXX`. Left for the OS to clean. */
export function tempDir(tag: string): string {
  return mkdtempSync(path.join(tmpdir(), `flowlab-${tag}-`));
}

/**
 * A working folder whose `../shared` does not exist, wherever the checkout and the shared folder
 * lie: a `lonely` folder inside a fresh temp folder (a temp folder itself would not do when the
 * shared material sits at `<tmpdir>/shared`, as in a clone made in /tmp beside it).
 */
export function lonelyDir(tag: string): string {
  const dir = path.join(tempDir(tag), 'lonely');
  mkdirSync(dir);
  return dir;
}

/**
 * A scratch folder for a whole test file: made before its first test, removed after its last.
 * Call at the top level of the file; the returned function gives the path inside tests.
 */
export function scratchDir(tag: string): () => string {
  let dir: string | undefined;
  beforeAll(() => {
    dir = tempDir(tag);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (!dir) throw new Error(`scratchDir('${tag}') is read before the tests started`);
    return dir;
  };
}

/**
 * Stores opened by a test file, closed together: `const stores = storeTracker(); afterEach(stores.closeAll)`.
 * `open()` defaults to `:memory:`.
 */
export function storeTracker(): { open(file?: string, options?: OpenStoreOptions): SqliteStore; closeAll(): void } {
  const opened: SqliteStore[] = [];
  return {
    open(file = ':memory:', options) {
      const s = openStore(file, options);
      opened.push(s);
      return s;
    },
    closeAll() {
      for (const s of opened.splice(0)) s.close();
    },
  };
}

/** What a lab-host test works on: its folder, the store in it, what the lab emitted, the lab and the API over it. */
export interface LabTest {
  dir: string;
  store: Store;
  events: LabEvent[];
  lab: LabHostHandle;
  api: FlowlabApi;
}

/**
 * A lab host for every test of a file (call at its top level). Before each test: a fresh folder
 * `flowlab-<tag>-*`, a store at `<dir>/lab.db`, an empty event list, then `t.lab = make(t)` (it
 * may prepare the folder first; its `emit` should push to `t.events`) and `t.api`, the handlers
 * over it (version `t`). After each: the lab disposed, the store closed, the folder removed. The returned object's
 * fields are the running test's; `relab(t, lab)` swaps in another lab mid-test.
 */
export function labPerTest(tag: string, make: (t: LabTest) => LabHostHandle): LabTest {
  const t = {} as LabTest;
  beforeEach(() => {
    t.dir = tempDir(tag);
    t.store = openStore(path.join(t.dir, 'lab.db'));
    t.events = [];
    relab(t, make(t));
  });
  afterEach(async () => {
    await t.lab.dispose();
    t.store.close();
    rmSync(t.dir, { recursive: true, force: true });
  });
  return t;
}

/** The repository's root folder (examples/, the shipped study plans). */
export const REPO_ROOT = path.resolve(import.meta.dirname, '..');

/**
 * The `createLabHost` options a lab-host test over `t` starts from: its store and `<dir>/lab.db`,
 * the models folder `<dir>/models`, the repository's examples, every event pushed to `t.events`,
 * and every model file accepted (`checkModel` passes). A test spreads them and adds its own
 * provider, trainer, data folder or checks.
 */
export function labHostOptions(t: LabTest): Pick<LabHostOptions, 'store' | 'dbFile' | 'modelDir' | 'examplesDir' | 'emit' | 'checkModel'> {
  return {
    store: t.store, dbFile: path.join(t.dir, 'lab.db'), modelDir: path.join(t.dir, 'models'), examplesDir: path.join(REPO_ROOT, 'examples'),
    emit: (e) => t.events.push(e),
    checkModel: async () => {},
  };
}

/**
 * Writes `<dir>/models/<name>` (made when missing) holding `GGUF <stem>`, a file to name and
 * claim, not a model to load; returns its absolute path.
 */
export function fakeModelFile(dir: string, name = 'tiny.gguf'): string {
  const file = path.join(dir, 'models', name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `GGUF ${name.replace(/\.gguf$/, '')}`);
  return file;
}

/** Makes `lab` the test's lab, with `t.api` over it (the previous lab is not disposed). */
export function relab(t: LabTest, lab: LabHostHandle): void {
  t.lab = lab;
  t.api = createHandlers({ store: t.store, version: 't', lab });
}

/** Writes `<dataDir>/gsm8k/test.jsonl`: three GSM8K tasks, 2+2 (4), 1+2 (3) and 2*2 (4). */
export function writeGsm8kTasks(dataDir: string): void {
  mkdirSync(path.join(dataDir, 'gsm8k'), { recursive: true });
  const line = (q: string, a: number) => JSON.stringify({ question: q, answer: `work\n#### ${a}` });
  writeFileSync(path.join(dataDir, 'gsm8k/test.jsonl'), [line('2+2?', 4), line('1+2?', 3), line('2*2?', 4)].join('\n') + '\n');
}

/**
 * A client over real handlers, shaped like the wire: an `ApiError` travels as its wire string
 * inside Electron's "Error invoking remote method" message, as the preload sees it.
 */
export function hostOver(api: FlowlabApi): FlowlabClient {
  return createRemoteApi(async (method, payload) => {
    try {
      return await (api[method] as (p: unknown) => unknown)(payload);
    } catch (err) {
      throw new Error(`Error invoking remote method 'flowlab:${method}': Error: ${(err as { toWire(): string }).toWire()}`);
    }
  });
}

/** An `Io` for `main(args, io)` that collects stdout and stderr (not a TTY). */
export function capture(): { out: string; err: string; isTTY: false; stdout(s: string): void; stderr(s: string): void } {
  const io = { out: '', err: '', isTTY: false as const, stdout: (s: string) => { io.out += s; }, stderr: (s: string) => { io.err += s; } };
  return io;
}

// ---------- records ----------

export const DEMO_YAML = 'name: demo\nsteps: []\n';

/**
 * An experiment to `createExperiment`: a `run` of workflow `demo` over gsm8k test, seed 7, with
 * tasks `t0..t{n-1}` (input `{ question: 'q<i>' }`, expected '4'); n = `over.limit` or 3.
 */
export function newExperiment(over: Partial<NewExperiment> = {}): NewExperiment {
  const yaml = over.workflowYaml ?? DEMO_YAML;
  const n = over.limit ?? 3;
  return {
    kind: 'run',
    workflowName: 'demo',
    workflowYaml: yaml,
    workflowHash: computeWorkflowHash(yaml),
    dataset: 'gsm8k',
    split: 'test',
    limit: n,
    seed: 7,
    config: { threads: 1 },
    tasks: Array.from({ length: n }, (_, i) => ({ taskIndex: i, taskId: `t${i}`, input: { question: `q${i}` }, expected: '4' })),
    ...over,
  };
}

/**
 * A completed, correct run `<expId>-r<taskIndex>` of task `t<taskIndex>` (answer '4', seed 7,
 * 30 + 9 tokens, 500 ms from 1_700_000_000_000), with `over` on top.
 */
export function runRecord(expId: string, taskIndex: number, over: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: asRunId(`${expId}-r${taskIndex}`),
    experimentId: asExperimentId(expId),
    taskIndex,
    taskId: `t${taskIndex}`,
    status: 'completed',
    answer: '4',
    expected: '4',
    score: 1,
    correct: true,
    seed: 7,
    promptTokens: 30,
    completionTokens: 9,
    startedAt: 1_700_000_000_000,
    endedAt: 1_700_000_000_500,
    failures: {},
    ...over,
  };
}

/** A role's reward ladder with reward `reward`: every rung below correctness passed, default weights. */
export function roleLadder(role: string, reward: number, over: Partial<RoleLadder> = {}): RoleLadder {
  return {
    role: asRoleName(role), format: 1, validity: 1, completion: 1, correctness: 0, credit: 0,
    weights: DEFAULT_WEIGHTS, reward, highestRung: 3, nodesRun: 1, nodesWired: 0, ...over,
  };
}

/** `RunRecord.ladder` from per-role rewards h: `{ role: roleLadder(role, h) }`. */
export function laddersOf(h: Record<string, number>, over: Partial<RoleLadder> = {}): Record<string, RoleLadder> {
  return Object.fromEntries(Object.entries(h).map(([role, reward]) => [role, roleLadder(role, reward, over)]));
}

/** One model call of role `planner` on `tiny.gguf` (prompt "Question: 2+2?\nPlan:", seed 42), with `over`. */
export function modelCall(over: Partial<ModelCallRecord> = {}): ModelCallRecord {
  return {
    callIndex: 0,
    role: asRoleName('planner'),
    modelRef: 'default',
    model: 'tiny.gguf',
    prompt: 'Question: 2+2?\nPlan:',
    params: { temperature: 0, maxTokens: 48 },
    seed: 42,
    completion: 'add two and two',
    promptTokens: 12,
    completionTokens: 5,
    ms: 3,
    startedAt: 1_700_000_000_001,
    ...over,
  };
}

/**
 * A run's two node events: agent node `plan` (role planner, one model call, ok) and tool node
 * `calc` (2/0: failed, execution, TOOL_ERROR "division by zero"), both wired by the human.
 */
export function nodeEvents(run: RunRecord): NodeEvent[] {
  return [
    {
      runId: run.runId,
      nodeId: asNodeId('plan'),
      attempt: 1,
      seq: 0,
      kind: 'agent',
      role: asRoleName('planner'),
      wiredBy: HUMAN,
      runBy: asRoleName('planner'),
      inputs: { question: '2+2?' },
      output: 'add two and two',
      status: 'ok',
      calls: [modelCall()],
      startedAt: 1_700_000_000_001,
      endedAt: 1_700_000_000_010,
    },
    {
      runId: run.runId,
      nodeId: asNodeId('calc'),
      attempt: 1,
      seq: 1,
      kind: 'tool',
      wiredBy: HUMAN,
      inputs: { expression: '2/0' },
      status: 'failed',
      failureClass: 'execution',
      errorCode: 'TOOL_ERROR',
      message: 'division by zero',
      calls: [],
      startedAt: 1_700_000_000_011,
      endedAt: 1_700_000_000_012,
    },
  ];
}

/** One agent node event `nodeId` run by `role` with `calls` (ok, output = the last completion). */
export function agentEvent(runId: string, nodeId: string, role: string, calls: ModelCallRecord[], over: Partial<NodeEvent> = {}): NodeEvent {
  return {
    runId: asRunId(runId), nodeId: asNodeId(nodeId), attempt: 1, seq: 0, kind: 'agent', role: asRoleName(role), wiredBy: HUMAN, runBy: asRoleName(role),
    inputs: {}, output: calls.at(-1)?.completion ?? '', status: 'ok', calls, startedAt: 0, endedAt: 1, ...over,
  };
}

// ---------- errors ----------

/** Runs `fn`, expecting it to throw an instance of `type`; returns the error (fails the test otherwise). */
export function thrownBy<E extends Error>(type: abstract new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return err as E;
  }
  throw new Error(`expected a ${type.name}, got a result`);
}

/** Awaits `p`, expecting it to reject with an instance of `type`; returns the error. */
export async function rejectionOf<E extends Error>(type: abstract new (...args: never[]) => E, p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return err as E;
  }
  throw new Error(`expected a ${type.name} rejection, got a result`);
}

/** Asserts that `fn` throws ApiError BAD_REQUEST for `method`, naming `field`, with a message matching `message`. */
export function expectBadRequest(fn: () => unknown, method: string, field: string | undefined, message: RegExp): void {
  const err = thrownBy(ApiError, fn);
  expect(err.code).toBe('BAD_REQUEST');
  expect(err.method).toBe(method);
  expect(err.field).toBe(field);
  expect(err.message).toMatch(message);
}

// ---------- timing ----------

/** A gate a fake can wait on: `await g.wait` holds until `g.open()`. */
export function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/**
 * Three experiments for the per-role trends (issue 29), hand-made (SIMULATED rows), figures by hand:
 * - `exp-trend-1` (gsm8k-team, run, 4 runs): solver h 0.2, 0.4, 0.6, 0.8 (mean 0.5), planner h 1
 *   each (mean 1); run 3 blamed on solver (1 of 4);
 * - `exp-trend-2` (gsm8k-team, blame-eval, 2 runs): solver h −0.5, 0.1 (mean −0.2), planner h 0.5,
 *   0.7 (mean 0.6); both runs blamed on solver, run 1 on planner too;
 * - `exp-trend-3` (gsm8k-single, run, 2 runs): solver h 0.9, 1 (mean 0.95), never blamed.
 * Created in that order (ids in that order too, so the order holds within one millisecond).
 */
export function seedRoleTrends(store: Store): void {
  const blame = (...roles: string[]) => ({
    roots: roles.map((r) => ({ nodeId: asNodeId(r === 'solver' ? 'solve' : 'plan'), failureClass: 'execution' as const, blamed: asRoleName(r) })),
    cascades: [], byRole: {}, ambiguous: [], infrastructure: [], silent: false,
  });
  const exps: Array<{ id: string; kind: 'run' | 'blame-eval'; workflowName: string; runs: Array<{ h: Record<string, number>; blamed?: string[] }> }> = [
    { id: 'exp-trend-1', kind: 'run', workflowName: 'gsm8k-team', runs: [{ h: { solver: 0.2, planner: 1 } }, { h: { solver: 0.4, planner: 1 } }, { h: { solver: 0.6, planner: 1 } }, { h: { solver: 0.8, planner: 1 }, blamed: ['solver'] }] },
    { id: 'exp-trend-2', kind: 'blame-eval', workflowName: 'gsm8k-team', runs: [{ h: { solver: -0.5, planner: 0.5 }, blamed: ['solver'] }, { h: { solver: 0.1, planner: 0.7 }, blamed: ['solver', 'planner'] }] },
    { id: 'exp-trend-3', kind: 'run', workflowName: 'gsm8k-single', runs: [{ h: { solver: 0.9 } }, { h: { solver: 1 } }] },
  ];
  for (const e of exps) {
    store.createExperiment(newExperiment({ id: e.id, kind: e.kind, workflowName: e.workflowName, limit: e.runs.length, ...(e.kind === 'blame-eval' && { config: { simulated: true, inject: ['solver=error@0.5'] } }) }));
    e.runs.forEach((r, i) => store.saveRun(runRecord(e.id, i, {
      ladder: laddersOf(r.h), ...(r.blamed && { credit: blame(...r.blamed), status: 'failed', correct: false, score: 0 }), ...(e.kind === 'blame-eval' && { simulated: true }),
    }), []));
    store.finishExperiment(e.id, 'completed');
  }
}

/**
 * Kills (SIGKILL) a CLI child writing experiment runs to `db` once it has stored `runs` runs of its
 * first experiment, or at `waitMs` (on the clock, not a count of polls: a loaded machine takes long
 * to start the CLI and load a model), or when it ends first. Resolves with the runs stored at the
 * kill, once the child has closed.
 */
export async function killAfterRuns(child: ChildProcess, db: string, runs: number, waitMs: number): Promise<number> {
  const closed = new Promise((r) => child.once('close', r));
  if (child.exitCode !== null) return storedRuns(db);
  let stored = 0;
  for (const deadline = Date.now() + waitMs; stored < runs && child.exitCode === null && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 25));
    if (!existsSync(db)) continue;
    try {
      stored = storedRuns(db);
    } catch { /* the writer may hold the first lock */ }
  }
  child.kill('SIGKILL');
  await closed;
  return stored;
}

function storedRuns(db: string): number {
  const s = openStore(db, { markInterrupted: false });
  try {
    const exp = s.listExperiments()[0];
    return exp ? s.listRuns(exp.id).length : 0;
  } finally {
    s.close();
  }
}
