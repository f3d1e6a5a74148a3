/**
 * How many tasks an experiment keeps in flight when `--parallel` is not given: enough to keep
 * every model it uses busy, and no more.
 */
import { MAX_PARALLEL } from '../limits.ts';
import type { ModelConfig } from '../model/config.ts';
import { endpointId, isEndpointRef, parseEndpointRef } from '../model/endpoint.ts';

/** Where a default comes from, for the note a face prints. */
export interface ParallelDefault {
  parallel: number;
  /** One line: `sum of endpoint concurrency (a:8 + b:8)`, `local GGUF: 1 (tune measured no sequence count)`. */
  why: string;
}

/**
 * Tasks in flight per call slot of a server: a task holds at most one call in flight, and between
 * two calls it holds none (parsing, tools, grading, the next prompt), so with one task per slot
 * a slot idles whenever its task is between calls, and tasks that started together stay in step
 * to the end (200 four-call tasks on 16 slots take ceil(200/16) = 13 rounds, not 200/16 = 12.5).
 * With more tasks than slots a freed slot has a call waiting in the endpoint's queue
 * (models/openai/pool.ts), whose `concurrency` bounds the CALLS in flight, and the pool's least
 * attained service rule lets the tasks admitted last catch up (bench/throughputSim.ts: two
 * replicas 1.95x one at three tasks per slot, 1.90x at two, 1.86x at one). Tasks in flight and
 * connections are two limits, as Inspect AI's `max_samples` and `max_connections` are.
 */
export const TASKS_PER_SLOT = 3;

/**
 * The default tasks in flight for the models of `cfg` (the references its roles use; every
 * reference when no role is named):
 * - an OpenAI-compatible server: {@link TASKS_PER_SLOT} times the sum of its endpoints'
 *   `concurrency` (each distinct endpoint counted once, however many references or roles name
 *   it); each endpoint still serves at most `concurrency` calls at once, the rest wait in its queue;
 * - a local GGUF file: `bestSequences(file)`, the sequence count `flowlab tune` measured best on
 *   this machine, else 1 (`flowlab tune` measures threads and batch size today, not sequences,
 *   so the default is 1);
 * added up over both, at least 1 and at most {@link MAX_PARALLEL}. Pure; endpoint references are
 * parsed (an invalid one counts as nothing here: the resolver has refused it already).
 */
export function defaultParallel(cfg: Pick<ModelConfig, 'models' | 'roleModels'>, bestSequences: (file: string) => number | undefined = () => undefined): ParallelDefault {
  const used = new Set(Object.values(cfg.roleModels));
  const refs = used.size ? [...used] : Object.keys(cfg.models);
  const endpoints = new Map<string, number>();
  let local = 0;
  const localWhy: string[] = [];
  for (const ref of refs) {
    const target = cfg.models[ref];
    if (target === undefined) continue;
    if (isEndpointRef(target)) {
      let specs;
      try {
        specs = parseEndpointRef(target);
      } catch {
        continue;
      }
      for (const s of specs) endpoints.set(endpointId(s), s.concurrency);
    } else {
      const best = bestSequences(target);
      const n = best !== undefined && Number.isInteger(best) && best >= 1 ? best : 1;
      if (n > local) local = n;
      localWhy.push(best === undefined ? `${baseName(target)}: 1 (flowlab tune measured no sequence count)` : `${baseName(target)}: ${n} (tuned)`);
    }
  }
  const served = [...endpoints.values()].reduce((a, b) => a + b, 0);
  const parallel = Math.min(MAX_PARALLEL, Math.max(1, TASKS_PER_SLOT * served + local));
  const parts: string[] = [];
  if (endpoints.size) parts.push(`${TASKS_PER_SLOT} x the sum of endpoint concurrency ${[...endpoints.values()].join(' + ')} = ${TASKS_PER_SLOT} x ${served}`);
  if (localWhy.length) parts.push(`local GGUF ${localWhy.join(', ')}`);
  return { parallel, why: parts.length ? parts.join('; ') : 'no model named: 1' };
}

const baseName = (file: string) => file.split(/[\\/]/).pop() ?? file;
