/**
 * The documented maxima of every size a user, a file or a request can choose (docs/architecture.md,
 * "Limits"). The CLI's integer flags take their upper bound from {@link FLAG_MAXIMA} by flag name,
 * the lab API's schemas (core/api/fields.ts) use the same numbers, and the parsers of workflow,
 * dataset and payload text refuse documents nested deeper than {@link MAX_NESTING_DEPTH}.
 * Threads are also capped by the machine: a request above its cores is lowered to them with a
 * note (`clampThreads` in models/resolve.ts).
 */

/** Tasks per experiment (`--limit`, `limit`), injected runs, iterations, held-out tasks. */
export const MAX_TASKS = 10_000;
/** Rollouts per task (`--group`, `group`). */
export const MAX_GROUP = 64;
/** CPU threads a request may name (`--threads`, `threads`) before the machine's own cap. */
export const MAX_THREADS_REQUEST = 256;
/** Context tokens per model (`--context-size`, `contextSize`). */
export const MAX_CONTEXT_SIZE = 131_072;
/** Parallel sequences (concurrent calls) per model context. */
export const MAX_SEQUENCES = 64;
/** Tasks, runs or judge calls in flight for one experiment (`--parallel`, `parallel`; core/schedule). */
export const MAX_PARALLEL = 1024;
/** Training batch (`train --batch`) and steps (`--steps`, `--sft-steps` has its own 100). */
export const MAX_BATCH = 4096;
export const MAX_STEPS = 10_000;
/** Generated tokens per call (`--max-tokens`, a step's `max_tokens`). */
export const MAX_GENERATED_TOKENS = 32_768;
/** Nesting depth of a workflow, a dataset line, a JSON schema or an API payload (objects plus arrays). */
export const MAX_NESTING_DEPTH = 64;
/** API request body, bytes (`flowlab serve` and `serve-model`, host/server.ts). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * Upper bounds of the CLI's integer flags, by long name without `--` (a flag's own `max`, where
 * it gives one, wins). A flag not listed is bounded by `Number.MAX_SAFE_INTEGER`.
 */
export const FLAG_MAXIMA: Readonly<Record<string, number>> = {
  limit: MAX_TASKS,
  runs: MAX_TASKS,
  iterations: MAX_TASKS,
  heldout: MAX_TASKS,
  'warm-start': MAX_TASKS,
  'distill-every': MAX_TASKS,
  offset: 10_000_000,
  group: MAX_GROUP,
  parallel: MAX_PARALLEL,
  'heldout-samples': MAX_GROUP,
  threads: MAX_THREADS_REQUEST,
  'context-size': MAX_CONTEXT_SIZE,
  batch: MAX_BATCH,
  steps: MAX_STEPS,
  'max-tokens': MAX_GENERATED_TOKENS,
  'card-budget': 100_000,
  budget: 100_000,
  'distill-shots': 100,
  shots: 100,
};

/**
 * The nesting depth of a parsed JSON-like value: 0 for a scalar, 1 for a flat object or array.
 * Iterative (an explicit stack), so a 100,000-level value is measured without recursion; stops
 * counting once `limit` is passed.
 */
export function nestingDepth(value: unknown, limit = MAX_NESTING_DEPTH): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    const depth = d + 1;
    if (depth > max) max = depth;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth]);
  }
  return max;
}

/**
 * The deepest bracket nesting of JSON or YAML flow text (`{`, `[`), counted on the characters
 * alone before any parser recurses; quoted strings are skipped. An upper-bound check to run
 * before `JSON.parse` or a YAML parse, whose recursion overflows the stack on deep input.
 */
export function bracketDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"') quote = c;
    else if (c === '{' || c === '[') {
      depth++;
      if (depth > max) max = depth;
    } else if (c === '}' || c === ']') depth = Math.max(0, depth - 1);
  }
  return max;
}
