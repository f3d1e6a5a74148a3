/**
 * End-to-end harness: a real `flowlab serve` child process over a fresh database and model
 * folder, and Debian Chromium driven by playwright-core (`/usr/bin/chromium` from Debian apt, headless, with
 * the flags in CHROMIUM_FLAGS below; it starts in about 0.4 s on a 2-core machine).
 * Nothing here is mocked: the page talks HTTP + SSE to the real host, which runs the real core
 * and node-llama-cpp.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { openStore, type Store } from '../core/store/index.ts';
import { gsm8kTest as GSM8K_TEST, shared as SHARED, tinyModel as TINY_MODEL } from '../test/fixtures.ts';

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The shared test material, the tiny real GGUF model (stories260K) and GSM8K's test split (test/fixtures.ts). */
export { gsm8kTest as GSM8K_TEST, shared as SHARED, tinyModel as TINY_MODEL } from '../test/fixtures.ts';
/** Screenshots of every view (git-ignored). */
export const SCREENSHOTS = path.join(ROOT, 'artifacts/screenshots');
/** Viewport of every page and screenshot. */
export const VIEWPORT = { width: 1280, height: 800 } as const;

/** Chromium flags that work headless in a container without a GPU or network. The profile dir is added per launch. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
] as const;

/** Whether the e2e suite must run (CI sets it): a missing browser is then a failure, not a skip. */
export const REQUIRED = process.env.FLOWLAB_E2E_REQUIRED === '1';

/** The Chromium binary: `$FLOWLAB_CHROMIUM` when set (only that), else Debian's `/usr/bin/chromium`, else one on PATH. */
export function findChromium(): string | undefined {
  const override = process.env.FLOWLAB_CHROMIUM;
  const candidates = override ? [override] : ['/usr/bin/chromium', ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean).map((d) => path.join(d, 'chromium'))];
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** Why the browser part cannot run here (undefined when it can). */
export function browserMissing(): string | undefined {
  if (findChromium()) return undefined;
  const where = process.env.FLOWLAB_CHROMIUM ? `$FLOWLAB_CHROMIUM (${process.env.FLOWLAB_CHROMIUM}) is not an executable file` : 'no /usr/bin/chromium (nor chromium on PATH)';
  return `Chromium not found: ${where}; install it with \`apt-get install -y chromium\``;
}

/** Why the model-dependent part cannot run here (undefined when it can). */
export function sharedMissing(): string | undefined {
  if (!existsSync(TINY_MODEL)) return `the tiny model ${TINY_MODEL} is missing (set FLOWLAB_SHARED to the shared folder)`;
  if (!existsSync(GSM8K_TEST)) return `GSM8K data ${GSM8K_TEST} is missing (set FLOWLAB_SHARED to the shared folder)`;
  return undefined;
}

/**
 * Makes sure `out/renderer` holds a build of the renderer: builds it (`electron-vite build`,
 * a few seconds) when index.html is missing or older than a source file under renderer/.
 */
export function ensureRendererBuilt(): void {
  const index = path.join(ROOT, 'out/renderer/index.html');
  const builtAt = existsSync(index) ? statSync(index).mtimeMs : -1;
  if (builtAt >= 0 && newestMtime(path.join(ROOT, 'renderer')) <= builtAt) return;
  const bin = path.join(ROOT, 'node_modules/.bin/electron-vite');
  const res = spawnSync(bin, ['build', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1' } });
  if (res.status !== 0) throw new Error(`electron-vite build failed (exit ${res.status}):\n${res.stdout}\n${res.stderr}`);
  if (!existsSync(index)) throw new Error(`electron-vite build did not write ${index}`);
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (entry.isFile()) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** A fresh temporary folder for one suite: the database, the model folder, the browser profile. */
export interface Workspace {
  dir: string;
  db: string;
  models: string;
  profile: string;
  remove(): void;
}

/** Creates the workspace; its model folder links the tiny model when there is one. */
export function createWorkspace(): Workspace {
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-e2e-'));
  const models = path.join(dir, 'models');
  const profile = path.join(dir, 'chromium-profile');
  mkdirSync(models);
  mkdirSync(profile);
  if (existsSync(TINY_MODEL)) symlinkSync(TINY_MODEL, path.join(models, path.basename(TINY_MODEL)));
  return { dir, db: path.join(dir, 'lab.db'), models, profile, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A running `flowlab serve` child. */
export interface ServeProcess {
  /** The page URL with its token, as printed. */
  url: string;
  /** `http://127.0.0.1:P` */
  origin: string;
  port: number;
  token: string;
  child: ChildProcessWithoutNullStreams;
  /** Everything the child wrote on stderr so far (for failure messages). */
  stderr(): string;
  /** SIGTERM, then SIGKILL after 10 s; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `node bin/flowlab.js serve --port 0 --db <db> --models <dir>` and waits for its URL.
 * `again` starts it on a stopped server's port with its token (`FLOWLAB_TOKEN`), as a user
 * restarting it would, so the open page can reconnect. `extraArgs`: more `flowlab serve` flags.
 */
export async function startServe(ws: Workspace, timeoutMs = 30_000, again?: { port: number; token: string }, extraArgs: readonly string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['bin/flowlab.js', 'serve', '--port', String(again?.port ?? 0), '--db', ws.db, '--models', ws.models, ...extraArgs], {
    cwd: ROOT,
    env: { ...process.env, FLOWLAB_SHARED: SHARED, ...(again ? { FLOWLAB_TOKEN: again.token } : {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // Never outlive the test process, whatever ends it.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.off('exit', reap));
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`flowlab serve printed no URL within ${timeoutMs} ms; stderr:\n${err}`));
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n') && line !== undefined) {
        clearTimeout(timer);
        resolve(line.trim());
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`flowlab serve exited (code ${code}, signal ${signal}) before printing its URL; stderr:\n${err}`));
    });
  });
  const m = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]+)$/.exec(url);
  if (!m) {
    child.kill('SIGKILL');
    throw new Error(`unexpected first stdout line of flowlab serve: ${JSON.stringify(url)}`);
  }
  const port = Number(m[1]);
  let exited: Promise<number | null> = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  if (child.exitCode !== null) exited = Promise.resolve(child.exitCode);
  return {
    url,
    origin: `http://127.0.0.1:${port}`,
    port,
    token: m[2]!,
    child,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        const code = await exited;
        clearTimeout(kill);
        return code;
      }
      return child.exitCode;
    },
  };
}

/** Headless Debian Chromium with a fresh profile, 1280x800. */
export async function launchBrowser(ws: Workspace): Promise<BrowserContext> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error(browserMissing());
  // launchPersistentContext owns --user-data-dir (playwright refuses it in args): the profile is
  // the workspace's fresh, empty folder.
  return chromium.launchPersistentContext(ws.profile, {
    executablePath,
    headless: true,
    args: [...CHROMIUM_FLAGS],
    viewport: VIEWPORT,
    deviceScaleFactor: 1,
    locale: 'en-US',
    timezoneId: 'UTC',
    timeout: 30_000,
  });
}

/** A served lab over a seeded database with one page open in Chromium: where a view test starts. */
export interface OpenLab<T> {
  ws: Workspace;
  serve: ServeProcess;
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page (`pageerror`), in order. */
  pageErrors: string[];
  /** What `seed` returned (experiment ids and the like). */
  seeded: T;
  /** Closes the browser, stops the server and removes the workspace. */
  close(): Promise<void>;
}

/**
 * Builds the renderer if needed, makes a fresh workspace, lets `seed` write into its database
 * (closed again before the server opens it; `ws` for seeds that run the CLI on it), starts
 * `flowlab serve` (with `options.serveArgs` as more flags) and opens a page in headless Chromium.
 * What fails on the way is cleaned up.
 */
export async function openLab<T>(seed: (store: Store, ws: Workspace) => Promise<T> | T, options: { serveArgs?: readonly string[] } = {}): Promise<OpenLab<T>> {
  ensureRendererBuilt();
  const ws = createWorkspace();
  let serve: ServeProcess | undefined;
  let context: BrowserContext | undefined;
  const close = async () => {
    await context?.close().catch(() => {});
    await serve?.stop();
    ws.remove();
  };
  try {
    const store = openStore(ws.db);
    let seeded: T;
    try {
      seeded = await seed(store, ws);
    } finally {
      store.close();
    }
    serve = await startServe(ws, undefined, undefined, options.serveArgs);
    context = await launchBrowser(ws);
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    return { ws, serve, context, page, pageErrors, seeded, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Saves a 1280x800 screenshot of the page as artifacts/screenshots/<name>.png; returns the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, animations: 'disabled', caret: 'hide' });
  return file;
}

/** Performance lines of this run, printed as they come and written to artifacts/e2e-perf.json. */
const perf: Record<string, unknown> = {};
export function reportPerf(key: string, value: unknown, line: string): void {
  perf[key] = value;
  process.stdout.write(`[e2e perf] ${line}\n`);
  mkdirSync(path.join(ROOT, 'artifacts'), { recursive: true });
  writeFileSync(path.join(ROOT, 'artifacts/e2e-perf.json'), `${JSON.stringify(perf, null, 2)}\n`);
}

/**
 * Installed before any page script: records every long task (> 50 ms on the main thread) with
 * its start and duration, so a test can ask for the longest one within a time window.
 */
export const LONGTASK_OBSERVER = `(() => {
  const w = window;
  w.__flowlabLongTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__flowlabLongTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch (err) {
    w.__flowlabLongTaskError = String(err);
  }
  // Long animation frames (Chromium 123+): what a long frame spent its time on, for the breakdown.
  w.__flowlabLongFrames = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        w.__flowlabLongFrames.push({
          start: e.startTime, duration: e.duration, blocking: e.blockingDuration,
          style: e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0,
          scripts: (e.scripts || []).map((s) => ({ duration: s.duration, invoker: String(s.invoker || s.invokerType || ''), source: String(s.sourceFunctionName || '') + '@' + String(s.sourceURL || '').split('/').pop() + ':' + s.sourceCharPosition, forcedStyle: s.forcedStyleAndLayoutDuration })),
        });
      }
    }).observe({ type: 'long-animation-frame', buffered: true });
  } catch {
    // not supported: no breakdown
  }
})();`;

/**
 * The longest long task (ms) that started at or after `since` (performance.now() time), when it
 * started (`at`, performance.now() ms; -1 when none), and their count.
 */
export async function longestTaskSince(page: Page, since: number): Promise<{ longest: number; at: number; count: number }> {
  return page.evaluate((t0) => {
    const tasks = ((window as unknown as { __flowlabLongTasks?: Array<{ start: number; duration: number }> }).__flowlabLongTasks ?? []).filter((t) => t.start >= t0);
    const top = tasks.reduce<{ start: number; duration: number } | null>((m, t) => (!m || t.duration > m.duration ? t : m), null);
    return { longest: top?.duration ?? 0, at: top?.start ?? -1, count: tasks.length };
  }, since);
}

/** Main-thread tasks of a page recorded by Chromium's tracing: wall time and the thread's CPU time of each. */
export interface TaskTimes {
  /** Tasks of 50 ms or more (wall), longest first: wall ms, CPU ms, start (ms from the trace's start). */
  long: Array<{ wallMs: number; cpuMs: number; startMs: number }>;
  /** The most CPU time one task took (ms): its length on an idle machine, whatever the load beside it. */
  maxCpuMs: number;
  /** Main-thread tasks recorded (none means the trace saw nothing: no figure to trust). */
  count: number;
}

/** Names of Chromium's top-level main-thread trace events (category `toplevel`). */
const TOP_LEVEL = new Set(['RunTask', 'ThreadControllerImpl::RunTask', 'BlinkScheduler_PerformMicrotaskCheckpoint']);

/**
 * Starts a Chromium trace (category `toplevel`: one `RunTask` event a task, with wall `dur` and
 * thread-time `tdur`) of `page`'s renderer; the returned function stops it and gives the main
 * thread's (CrRendererMain) tasks. On a loaded machine a task's wall time includes the time the
 * thread waited for a core; its CPU time does not.
 */
export async function traceTasks(page: Page): Promise<() => Promise<TaskTimes>> {
  const cdp = await page.context().newCDPSession(page);
  const events: Array<{ name: string; ph: string; pid: number; tid: number; ts: number; dur?: number; tdur?: number; args?: { name?: string } }> = [];
  cdp.on('Tracing.dataCollected', (e) => events.push(...(e.value as unknown as typeof events)));
  await cdp.send('Tracing.start', { categories: 'toplevel,__metadata', transferMode: 'ReportEvents' });
  return async () => {
    const complete = new Promise<void>((resolve) => cdp.once('Tracing.tracingComplete', () => resolve()));
    await cdp.send('Tracing.end');
    await complete;
    await cdp.detach().catch(() => {});
    const mains = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
    // A task is a top-level RunTask, or a microtask checkpoint run outside one (a promise's
    // continuation, e.g. after a fetch's JSON: React renders there when a store changes).
    const candidates = events
      .filter((e) => e.ph === 'X' && TOP_LEVEL.has(e.name) && mains.has(`${e.pid}:${e.tid}`) && e.dur !== undefined)
      .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
    const tasks: typeof candidates = [];
    for (const e of candidates) {
      const outer = tasks.at(-1);
      if (outer && outer.pid === e.pid && outer.tid === e.tid && e.ts + e.dur! <= outer.ts + outer.dur!) continue; // nested in the last task
      tasks.push(e);
    }
    const t0 = tasks.reduce((m, e) => Math.min(m, e.ts), Infinity);
    const long = tasks
      .filter((e) => e.dur! >= 50_000)
      .map((e) => ({ wallMs: e.dur! / 1000, cpuMs: (e.tdur ?? e.dur!) / 1000, startMs: (e.ts - t0) / 1000 }))
      .sort((a, b) => b.wallMs - a.wallMs);
    return { long, maxCpuMs: tasks.reduce((m, e) => Math.max(m, (e.tdur ?? e.dur!) / 1000), 0), count: tasks.length };
  };
}

/** One long animation frame (LoAF): its duration, the style-and-layout part, and the scripts that ran in it. */
export interface LongFrame {
  start: number;
  duration: number;
  blocking: number;
  style: number;
  scripts: Array<{ duration: number; invoker: string; source: string; forcedStyle: number }>;
}

/** The longest long animation frame that started at or after `since` (performance.now() time), or null (none, or not supported). */
export async function longestFrameSince(page: Page, since: number): Promise<LongFrame | null> {
  return page.evaluate((t0) => {
    const frames = ((window as unknown as { __flowlabLongFrames?: LongFrame[] }).__flowlabLongFrames ?? []).filter((f) => f.start >= t0);
    return frames.reduce<LongFrame | null>((m, f) => (!m || f.duration > m.duration ? f : m), null);
  }, since);
}

/** A long frame in one line: total, scripts (longest first), style and layout. */
export function frameBreakdown(f: LongFrame | null): string {
  if (!f) return 'no long animation frame recorded';
  const scripts = [...f.scripts].sort((a, b) => b.duration - a.duration).slice(0, 4).map((s) => `${s.duration.toFixed(0)} ms ${s.invoker} ${s.source}`);
  return `longest frame ${f.duration.toFixed(0)} ms (blocking ${f.blocking.toFixed(0)}): style+layout ${f.style.toFixed(0)} ms; scripts ${scripts.join('; ') || 'none'}`;
}

/**
 * Starts recording, in the page, every state the element `box` (a CSS selector) shows: the values
 * of `attributes` and the text of its descendant `[data-testid=count]`, joined by spaces, one entry
 * per change (a MutationObserver, so no state is missed between two reads from the test, however
 * short it lasts). Resolves with a function that returns the states seen so far, oldest first.
 */
export async function recordStates(page: Page, box: string, attributes: readonly string[], count: string): Promise<() => Promise<string[]>> {
  const key = `__flowlabStates${Math.random().toString(36).slice(2)}`;
  await page.evaluate(({ key, box, attributes, count }) => {
    const states: string[] = [];
    (window as unknown as Record<string, string[]>)[key] = states;
    new MutationObserver(() => {
      const el = document.querySelector(box);
      if (!el) return;
      const state = [...attributes.map((a) => el.getAttribute(a)), el.querySelector(`[data-testid="${count}"]`)?.textContent ?? ''].join(' ');
      if (states.at(-1) !== state) states.push(state);
    }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  }, { key, box, attributes: [...attributes], count });
  return () => page.evaluate((k) => [...((window as unknown as Record<string, string[]>)[k] ?? [])], key);
}
