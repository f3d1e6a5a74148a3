/**
 * Replaying an evolution without the model: the inner loop runs again from its stored settings
 * into a scratch in-memory store, every step's model calls served from the original store's
 * recorded calls (`providerFor`, normally models/replay's ReplayProvider over
 * `store.getExperimentCalls(step)`), and every record it derives (designs, proposals, workspace
 * summaries, verdicts, champions, iterations, results) is compared with the stored one.
 * Identical results mean: the same designs, verdicts and champion timeline, from the recording alone.
 */
import type { ModelProvider } from '../model/provider.ts';
import type { ToolSource } from '../engine/index.ts';
import { canonicalJson, openStore, type MassRecord, type Store } from '../store/index.ts';
import { parseMassDesign } from './design.ts';
import { MassError } from './errors.ts';
import { evolve, type EvolutionSettings } from './inner.ts';
import type { MassFamily } from './types.ts';

export interface EvolutionReplay {
  evolutionId: string;
  records: number;
  matched: number;
  /** `<kind> <key>: <what>` for each record that differs, is missing, or is extra. */
  mismatches: string[];
  /** Model files the replay loaded (0: no model was used). */
  modelsLoaded: number;
  wallSeconds: number;
}

/**
 * Compares recorded MASS records with replayed ones by (kind, key), values as canonical JSON
 * (`asReplayed` rewrites a replayed value's text first, e.g. paths). Returns how many there were,
 * how many are identical, and `<kind> <key>: missing in the replay | differs | extra in the replay`.
 */
export function compareRecords(original: readonly MassRecord[], replayed: readonly MassRecord[], asReplayed: (json: string) => string = (j) => j): { records: number; matched: number; mismatches: string[] } {
  const key = (r: MassRecord) => `${r.kind} ${r.key}`;
  const a = new Map(original.map((r) => [key(r), canonicalJson(r.value)]));
  const b = new Map(replayed.map((r) => [key(r), asReplayed(canonicalJson(r.value))]));
  const mismatches: string[] = [];
  let matched = 0;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (w === undefined) mismatches.push(`${k}: missing in the replay`);
    else if (w !== v) mismatches.push(`${k}: differs`);
    else matched++;
  }
  for (const k of b.keys()) if (!a.has(k)) mismatches.push(`${k}: extra in the replay`);
  return { records: a.size, matched, mismatches };
}

/** A provider that refuses every call: the replay's default model, so a missing recording is loud. */
const noModel: ModelProvider = {
  name: 'no model (replay)',
  generate: () => Promise.reject(new MassError('HALTED', 'replay asked for a model call that was not recorded')),
  modelsLoaded: () => 0,
  dispose: async () => {},
};

/**
 * Replays evolution `evolutionId` of `store` (see the module comment). Writes nothing to `store`.
 * Errors: MassError `NOT_FOUND` (no such evolution), `INVALID_DESIGN` (its stored first design
 * does not parse), and model errors from `providerFor` (e.g. REPLAY_MISSING).
 */
export async function replayEvolution(store: Store, evolutionId: string, deps: { family: MassFamily; providerFor: (experimentId: string) => ModelProvider; tools: ToolSource }): Promise<EvolutionReplay> {
  const t0 = performance.now();
  const rec = store.mass.get(evolutionId, 'evolution', 'settings');
  if (!rec) throw new MassError('NOT_FOUND', `no evolution ${evolutionId} in ${store.file}`, { field: 'evolutionId' });
  const s = rec.value as EvolutionSettings;
  const first = parseMassDesign(s.firstDesign, s.catalogue, s.limits);
  if (!first.ok) throw new MassError('INVALID_DESIGN', `evolution ${evolutionId}: its stored first design does not parse: ${first.issues[0]?.message}`);
  const scratch = openStore(':memory:');
  const used: ModelProvider[] = [];
  try {
    await evolve(
      { evolutionId, tasks: s.tasks, firstDesign: first.design, iterations: s.iterations, rule: s.rule, seed: s.seed, rubric: s.rubric, catalogue: s.catalogue, limits: s.limits, budget: s.budget, judgeTokens: s.judgeTokens, optimizerTokens: s.optimizerTokens, optimizerTemperature: s.optimizerTemperature, ...(s.auditSwaps !== undefined && { auditSwaps: s.auditSwaps }), optimizerMode: s.optimizerMode ?? 'free', ...(s.judge && { judge: s.judge }), ...(s.proposer && { proposer: s.proposer }), ...(s.selection && { selection: s.selection }), family: s.editMenu ? { ...deps.family, editMenu: s.editMenu } : deps.family },
      {
        store: scratch,
        provider: noModel,
        providerFor: (id) => {
          const p = deps.providerFor(id);
          used.push(p);
          return p;
        },
        tools: deps.tools,
      },
    );
    const { records, matched, mismatches } = compareRecords(store.mass.list(evolutionId), scratch.mass.list(evolutionId));
    return { evolutionId, records, matched, mismatches, modelsLoaded: used.reduce((n, p) => n + p.modelsLoaded(), 0), wallSeconds: (performance.now() - t0) / 1000 };
  } finally {
    scratch.close();
  }
}
