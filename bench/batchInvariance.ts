/**
 * Is a sequence's decode batch-invariant on this build? (issue 26, "One laptop" in docs/scale.md)
 *
 * Decodes each of 8 prompts alone (one sequence per llama.cpp decode, as `batching: 'isolated'`
 * does) and then inside mixed batches of 2..8 sequences (node-llama-cpp's default batching: every
 * sequence's next token in one decode), greedy, and compares, bit for bit, the full next-token
 * distribution (softmax of the logits, temperature 1, node-llama-cpp `controlledEvaluate`
 * `probabilities`) at every position. Batches: the first k prompts in order, the same k reversed,
 * and k prompts starting at prompt 4 (other partners), k = 2..8. The contexts are created as
 * Flowlab creates them (models/llama/loaders.ts): context 1,024 per sequence, 8 sequences, the
 * given threads, default batch size, default KV cache types.
 *
 * Run: `npx tsx bench/batchInvariance.ts [model.gguf] [--threads 1] [--steps 32]`
 * (default model: $FLOWLAB_SHARED/models/stories260K.gguf). Prints, per batch, how many positions
 * and probabilities differ from the solo decode, the largest absolute and relative difference, the
 * first differing position, and whether the greedy tokens differ.
 */
import path from 'node:path';
import { getLlama, type LlamaContextSequence, type Token } from 'node-llama-cpp';

const args = process.argv.slice(2);
const flag = (name: string, d: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : d;
};
const model = args.find((a) => a.endsWith('.gguf')) ?? path.join(process.env.FLOWLAB_SHARED ?? path.join(process.cwd(), '../shared'), 'models/stories260K.gguf');
const threads = flag('--threads', 1);
const steps = flag('--steps', 32);

const PROMPTS = [
  'Once upon a time, there was a little girl named Lily.',
  'The cat sat on the mat and',
  'Tom had a big red ball. One day',
  'The sun was hot. The dog wanted to',
  'Mom said, "Let us go to the park."',
  'There was a tree with many apples.',
  'Ben and Sue liked to play with blocks',
  'A bird flew over the house and saw',
];

/** One sequence's trace: the greedy token and the full distribution at each step. */
interface Trace {
  tokens: Token[];
  probs: Float64Array[];
}

const llama = await getLlama({ gpu: false, build: 'never' });
const m = await llama.loadModel({ modelPath: model, gpuLayers: 0 });
const encoded = PROMPTS.map((p) => [...(m.tokens.bos != null ? [m.tokens.bos] : []), ...m.tokenize(p)] as Token[]);

function dist(map: Map<Token, number>, size: number): Float64Array {
  const a = new Float64Array(size);
  for (const [t, p] of map) a[t] = p;
  return a;
}

/** Decodes `prompts` (indices) together: each step evaluates every sequence's next token at once (one decode when `mixed`). */
async function decode(indices: number[], mixed: boolean): Promise<Trace[]> {
  const context = await m.createContext({
    contextSize: 1024,
    sequences: 8,
    threads,
    ...(mixed ? {} : { batching: { itemPrioritizationStrategy: ({ items, size }) => (items[0] ? [{ item: items[0], processAmount: Math.max(1, Math.min(size, items[0].tokens.length)) }] : []) } }),
  });
  try {
    const seqs: LlamaContextSequence[] = indices.map(() => context.getSequence());
    const traces: Trace[] = indices.map(() => ({ tokens: [], probs: [] }));
    let inputs: Token[][] = indices.map((i) => encoded[i]!);
    for (let step = 0; step < steps; step++) {
      const outs = await Promise.all(
        seqs.map((s, j) => {
          const inp = inputs[j]!;
          const items = inp.map((t, k) => (k === inp.length - 1 ? ([t, { generateNext: { probabilities: true } }] as [Token, { generateNext: { probabilities: boolean } }]) : t));
          return s.controlledEvaluate(items);
        }),
      );
      inputs = outs.map((out, j) => {
        const last = out[out.length - 1]!;
        const probs = last.next.probabilities!;
        const top = probs.entries().next().value![0];
        traces[j]!.tokens.push(top);
        traces[j]!.probs.push(dist(probs, Math.max(...probs.keys()) + 1));
        return [top];
      });
    }
    return traces;
  } finally {
    await context.dispose();
  }
}

function compare(a: Trace, b: Trace): { positions: number; values: number; maxAbs: number; maxRel: number; first: number; tokens: boolean } {
  let positions = 0;
  let values = 0;
  let maxAbs = 0;
  let maxRel = 0;
  let first = -1;
  for (let s = 0; s < Math.min(a.probs.length, b.probs.length); s++) {
    if (a.tokens.slice(0, s).join() !== b.tokens.slice(0, s).join()) break; // paths parted: positions no longer comparable
    const x = a.probs[s]!;
    const y = b.probs[s]!;
    let diff = false;
    for (let v = 0; v < Math.max(x.length, y.length); v++) {
      const p = x[v] ?? 0;
      const q = y[v] ?? 0;
      if (p !== q) {
        values++;
        diff = true;
        maxAbs = Math.max(maxAbs, Math.abs(p - q));
        if (Math.max(p, q) > 0) maxRel = Math.max(maxRel, Math.abs(p - q) / Math.max(p, q));
      }
    }
    if (diff) {
      positions++;
      if (first < 0) first = s;
    }
  }
  return { positions, values, maxAbs, maxRel, first, tokens: a.tokens.join() !== b.tokens.join() };
}

console.log(`batch invariance: ${path.basename(model)}, threads ${threads}, ${steps} greedy steps per sequence, llama.cpp ${llama.buildType} build (${llama.gpu || 'cpu'})`);
const solo: Trace[] = [];
for (let i = 0; i < PROMPTS.length; i++) solo.push((await decode([i], false))[0]!);
const soloAgain = (await decode([0], false))[0]!;
const again = compare(solo[0]!, soloAgain);
console.log(`  solo twice (prompt 0): ${again.positions} positions differ`);
let anyDiff = 0;
let batches = 0;
/** Each prompt's distinct traces in mixed batches (by the bits of every distribution): 1 would mean mixed decoding is deterministic, only different from solo. */
const mixedTraces = PROMPTS.map(() => new Map<string, string[]>());
const examples: Array<Map<string, Trace>> = [];
const key = (t: Trace) => Buffer.concat(t.probs.map((p) => Buffer.from(p.buffer))).toString('base64');
for (let k = 2; k <= 8; k++) {
  const sets = [
    { name: `prompts 0..${k - 1}`, idx: Array.from({ length: k }, (_, i) => i) },
    { name: `prompts ${k - 1}..0`, idx: Array.from({ length: k }, (_, i) => k - 1 - i) },
    { name: `prompts 4.. (wrap)`, idx: Array.from({ length: k }, (_, i) => (4 + i) % 8) },
  ];
  for (const set of sets) {
    for (const mixed of [true, false]) {
      const traces = await decode(set.idx, mixed);
      batches++;
      const rows = set.idx.map((p, j) => ({ p, c: compare(solo[p]!, traces[j]!) }));
      if (mixed) set.idx.forEach((p, j) => {
        const k2 = key(traces[j]!);
        examples[p] ??= new Map();
        examples[p]!.set(k2, traces[j]!);
        const seen = mixedTraces[p]!.get(k2) ?? [];
        seen.push(`${k} seqs ${set.name}`);
        mixedTraces[p]!.set(k2, seen);
      });
      const bad = rows.filter((r) => r.c.positions > 0);
      if (bad.length) anyDiff++;
      const maxAbs = Math.max(0, ...rows.map((r) => r.c.maxAbs));
      const maxRel = Math.max(0, ...rows.map((r) => r.c.maxRel));
      console.log(
        `  ${String(k)} seqs ${set.name.padEnd(18)} ${mixed ? 'mixed   ' : 'isolated'}: ${bad.length}/${k} sequences differ from solo` +
          (bad.length
            ? ` (${bad.map((r) => `p${r.p}: ${r.c.positions}/${steps} positions, ${r.c.values} probabilities, first at step ${r.c.first}${r.c.tokens ? ', greedy tokens differ' : ''}`).join('; ')}); max |dp| ${maxAbs.toExponential(2)}, max rel ${maxRel.toExponential(2)}`
            : ''),
      );
    }
  }
}
console.log(`  ${anyDiff}/${batches} batches differ from the solo decodes`);
mixedTraces.forEach((m2, p) => {
  let between = '';
  if (m2.size > 1) {
    const [a, b] = [...examples[p]!.values()];
    const c = compare(a!, b!);
    between = `; the two differ at ${c.positions}/${steps} positions, first at step ${c.first}, max |dp| ${c.maxAbs.toExponential(2)}${c.tokens ? ', greedy tokens differ' : ''}`;
  }
  console.log(`  prompt ${p}: ${m2.size} distinct trace(s) over its ${[...m2.values()].reduce((a, v) => a + v.length, 0)} mixed batches${m2.size > 1 ? ': ' + [...m2.values()].map((v) => `[${v.join(', ')}]`).join(' vs ') : ''}${between}`);
});
const s0 = solo[0]!.probs[1]!;
const m0 = [...examples[0]!.values()][0]!.probs[1]!;
const top = s0.indexOf(Math.max(...s0));
console.log(`  e.g. prompt 0, step 1 (first one-token decode), token ${top}: p = ${s0[top]} alone, ${m0[top]} in a mixed batch`);
await m.dispose();
await llama.dispose();
