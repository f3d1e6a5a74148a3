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
 * The default tasks in flight for the models of `cfg` (the references its roles use; every
 * reference when no role is named):
 * - an OpenAI-compatible server: the sum of its endpoints' `concurrency` (each distinct endpoint
 *   counted once, however many references or roles name it), since a task holds at most one call
 *   of a sequential team in flight and each endpoint serves `concurrency` calls at once;
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
  const parallel = Math.min(MAX_PARALLEL, Math.max(1, served + local));
  const parts: string[] = [];
  if (endpoints.size) parts.push(`sum of endpoint concurrency ${[...endpoints.values()].join(' + ')} = ${served}`);
  if (localWhy.length) parts.push(`local GGUF ${localWhy.join(', ')}`);
  return { parallel, why: parts.length ? parts.join('; ') : 'no model named: 1' };
}

const baseName = (file: string) => file.split(/[\\/]/).pop() ?? file;
