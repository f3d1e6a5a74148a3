/**
 * The llama.cpp runtime (node-llama-cpp's `Llama`), shared by every LlamaProvider of the process,
 * and the fan-out of its log lines to the providers that are open.
 */
import {
  getLlama,
  LlamaLogLevelGreaterThan,
  LlamaLogLevelGreaterThanOrEqual,
  type Llama,
  type LlamaLogLevel,
} from 'node-llama-cpp';
import { llamaGpuOption } from './platform.ts';

/** An open provider's interest in llama.cpp's log lines. */
export interface LogListener {
  /** Least severe level passed on. */
  level: LlamaLogLevel;
  /** The provider's own receiver; absent: printed on stderr (once, however many providers want it). */
  onLog?: (level: `${LlamaLogLevel}`, message: string) => void;
  /** Keeps the line for error messages. */
  record: (level: string, message: string) => void;
}

/** Open providers' log listeners: llama.cpp's log lines are process-wide, so every open provider sees them. */
export const logListeners = new Set<LogListener>();
/** One runtime per GPU mode. */
const runtimes = new Map<'auto' | 'off', Promise<Llama>>();

/**
 * The llama.cpp runtime shared by every provider of the process (per GPU mode); providers never
 * dispose it (node-llama-cpp disposes it before the process exits). Measured with
 * node-llama-cpp 3.21.1: once a process's first runtime is disposed, the log lines of any later
 * runtime bypass the JS logger (printed straight to stdout), so llama.cpp's reasons for a
 * failed load (e.g. "tensor ... has incorrect shape") could no longer reach error messages.
 * Sharing also saves `getLlama`'s ~0.7 s binary self-test per provider.
 */
export function sharedRuntime(gpu: 'auto' | false, logLevel: LlamaLogLevel): Promise<Llama> {
  const key = gpu === 'auto' ? 'auto' : 'off';
  let runtime = runtimes.get(key);
  if (!runtime) {
    runtime = getLlama({
      // CPU-only is the Metal build on Apple Silicon (the only one published there), with
      // `gpuLayers: 0` at load (models/llama/platform.ts); `false` elsewhere.
      gpu: llamaGpuOption(gpu),
      build: 'never', // never compile llama.cpp (minutes); use the prebuilt binary or fail
      usePrebuiltBinaries: true,
      skipDownload: true,
      progressLogs: false,
      // 0 = no global cap: each context then uses exactly its `threads`.
      maxThreads: 0,
      logLevel,
      logger: dispatchLog,
    });
    runtimes.set(key, runtime);
    runtime.catch(() => {
      if (runtimes.get(key) === runtime) runtimes.delete(key);
    });
  }
  return runtime.then((llama) => {
    if (llama.disposed) {
      // disposed by someone else (e.g. process exit handlers): start a new one
      if (runtimes.get(key) === runtime) runtimes.delete(key);
      return sharedRuntime(gpu, logLevel);
    }
    if (LlamaLogLevelGreaterThan(llama.logLevel, logLevel)) llama.logLevel = logLevel;
    return llama;
  });
}

function dispatchLog(level: LlamaLogLevel, message: string): void {
  let print = false;
  for (const l of logListeners) {
    if (!LlamaLogLevelGreaterThanOrEqual(level, l.level)) continue;
    l.record(level, message);
    if (l.onLog) l.onLog(level, message);
    else print = true;
  }
  if (print) process.stderr.write(`[llama.cpp] ${level}: ${message}\n`);
}
