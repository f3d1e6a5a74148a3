/**
 * Training the MASS edit optimizer (editOptimizer.ts) by rejection-sampling fine-tuning
 * (RFT; expert iteration: Anthony et al. 2017, "Thinking Fast and Slow with Deep Learning and
 * Tree Search"; STaR, Zelikman et al. 2022; RFT, Yuan et al. 2023): the model's OWN proposals,
 * sampled at temperature under the edit grammar, are kept when the external grader says the edit
 * helped, and the model is fine-tuned on them (loss on the completion tokens only).
 *
 * One collection (`collectEdits`):
 *  1. **States**: `states` designs to propose from — the first design, then designs reached from
 *     it by 1..`walk` edits drawn uniformly among the valid ones (`trainingStates`, seeded: the
 *     same seed gives the same states). The walk only chooses where the optimizer starts; every
 *     proposal trained on comes from the model.
 *  2. **Scores**: each state, and each distinct design a proposal gives, runs on the same `tasks`
 *     (training tasks only, never held-out ones) with one seed per task for every design
 *     (`deriveSeed(seed, 'score', j)`: paired, as evolve's `--select-tasks`), graded by the
 *     family's grader.
 *  3. **Proposals**: from each state the model is asked `samples` times (seed
 *     `deriveSeed(seed, 'propose', s, g)`, at `temperature`), with the prompt evolve's optimizer
 *     reads (editPrompt: the task, the design, its workspace's evidence, no history). A proposal's
 *     **gain** is its design's mean score minus the state's, over the same tasks and seeds.
 *  4. **Kept**: proposals whose gain is at least `minGain` (> 0). Their recorded prompt and
 *     completion ids become SFT sequences (`keptSequences`).
 * Every call and workspace is a stored step (`<id>.s<state>.p<g>`, `<id>.d<design>.t<task>`),
 * read back on a rerun with the same id, so a killed collection resumes and the same seed gives
 * the same records.
 */
import { deriveSeed, mulberry32 } from '../random.ts';
import type { ExperimentCall } from '../store/types.ts';
import type { Task } from '../tasks/types.ts';
import { choiceAllowed, choiceMask } from '../training/choiceMask.ts';
import type { SftSequence } from '../training/port.ts';
import { isTrainable, sftSequences, type CallMask } from '../training/samples.ts';
import { designJson, DESIGN_LIMITS, type DesignCatalogue, type DesignLimits } from './design.ts';
import { editOptions, editText, type MassEdit } from './edits.ts';
import { EDIT_TOKENS, optimizeEdit } from './editOptimizer.ts';
import { evidenceOf } from './judge.ts';
import { runMass } from './run.ts';
import type { StepDeps } from './stored.ts';
import type { EditMenu, MassDesign, MassFamily, Workspace } from './types.ts';

/**
 * Defaults of `flowlab train-optimizer`: round G of docs/mass-inner.md (16 states of at most one
 * edit from version 0, 8 samples each at temperature 1.5, kept at a gain of 0.15 or more on 16
 * training tasks), whose trained optimizer's champions beat version 0 on 3 seeds.
 */
export const RFT_DEFAULTS = { states: 16, walk: 1, samples: 8, temperature: 1.5, minGain: 0.15, tasks: 16, seed: 1 };

/** A state to propose from: the design and the edits that led there from the first design. */
export interface TrainingState {
  design: MassDesign;
  path: MassEdit[];
}

/**
 * `count` states (see the module comment): state 0 is `first`; state i > 0 walks
 * 1 + (i − 1) mod `walk` edits from `first`, each drawn uniformly (mulberry32 of
 * `deriveSeed(seed, 'walk', i)`) among the valid new edits (`editOptions`, excluding the designs
 * already on the walk). A walk that runs out of edits stops early. Pure; the same arguments give
 * the same states. States may repeat a design (they are distinct draws, not distinct designs).
 */
export function trainingStates(first: MassDesign, menu: EditMenu, catalogue: DesignCatalogue, count: number, walk: number, seed: number, limits: DesignLimits = DESIGN_LIMITS): TrainingState[] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`trainingStates: count must be an integer >= 1, got ${count}`);
  if (!Number.isInteger(walk) || walk < 0) throw new RangeError(`trainingStates: walk must be an integer >= 0, got ${walk}`);
  const out: TrainingState[] = [{ design: first, path: [] }];
  for (let i = 1; i < count; i++) {
    const rng = mulberry32(deriveSeed(seed, 'walk', i));
    const steps = walk === 0 ? 0 : 1 + ((i - 1) % walk);
    let design = first;
    const seen: MassDesign[] = [first];
    const path: MassEdit[] = [];
    for (let k = 0; k < steps; k++) {
      const options = editOptions(design, menu, catalogue, limits, seen);
      if (!options.length) break;
      const pick = options[Math.floor(rng() * options.length)]!;
      design = pick.design;
      seen.push(design);
      path.push(pick.edit);
    }
    out.push({ design, path });
  }
  return out;
}

/** The mean of `xs` (NaN when empty). */
const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

/**
 * The paired gain of `after` over `before` (same tasks, same seeds, same order): the mean of
 * `after[j] − before[j]`. Errors: RangeError when the lengths differ or are 0.
 */
export function pairedGain(before: readonly number[], after: readonly number[]): number {
  if (before.length !== after.length || !before.length) throw new RangeError(`pairedGain: ${before.length} scores before, ${after.length} after (they must be paired, at least one)`);
  return mean(after.map((a, j) => a - before[j]!));
}

export interface RftSpec {
  /** The collection's id: its steps are `<id>.…` (the same id reads them back). */
  id: string;
  family: MassFamily;
  first: MassDesign;
  catalogue: DesignCatalogue;
  /** Training tasks the designs are scored on (never held-out ones). */
  tasks: readonly Task[];
  states?: number;
  walk?: number;
  samples?: number;
  temperature?: number;
  minGain?: number;
  seed?: number;
  maxTokens?: number;
}

/** One proposal of the model. */
export interface RftProposal {
  state: number;
  sample: number;
  /** The optimizer step's experiment id (its recorded call is the SFT data). */
  experimentId: string;
  runId: string;
  /** The edit as text, or null when the reply was none of the valid edits (rejected). */
  edit: string | null;
  op: string | null;
  scores: number[];
  /** Its design's mean score minus the state's (NaN when rejected). */
  gain: number;
  kept: boolean;
}

export interface RftCollection {
  states: Array<TrainingState & { scores: number[]; mean: number }>;
  proposals: RftProposal[];
  /** Proposals kept (gain >= minGain). */
  kept: number;
  /** Distinct designs scored (states and proposals). */
  designsScored: number;
}

export type RftEvent = { type: 'state'; state: number; mean: number; path: string } | { type: 'proposal'; proposal: RftProposal };

/**
 * Runs one collection (module comment) with the live model in `deps.provider`; the optimizer
 * calls record their token ids. Errors: those of `runMass` and `optimizeEdit` (a stored step of
 * another workflow: MassError `MISMATCH`); a family without an edit menu: Error.
 */
export async function collectEdits(spec: RftSpec, deps: StepDeps & { onEvent?: (e: RftEvent) => void }): Promise<RftCollection> {
  const menu = spec.family.editMenu;
  if (!menu) throw new Error(`train-optimizer: the ${spec.family.dataset} family has no edit menu`);
  if (!spec.tasks.length) throw new Error('train-optimizer: no training task to score designs on');
  const seed = spec.seed ?? RFT_DEFAULTS.seed;
  const minGain = spec.minGain ?? RFT_DEFAULTS.minGain;
  const states = trainingStates(spec.first, menu, spec.catalogue, spec.states ?? RFT_DEFAULTS.states, spec.walk ?? RFT_DEFAULTS.walk, seed);
  const scored = new Map<string, { index: number; spaces: Workspace[] }>();
  const score = async (design: MassDesign): Promise<Workspace[]> => {
    const key = designJson(design);
    const known = scored.get(key);
    if (known) return known.spaces;
    const index = scored.size;
    const spaces: Workspace[] = [];
    for (let j = 0; j < spec.tasks.length; j++) {
      spaces.push(await runMass(design, spec.tasks[j]!, { ...deps, family: spec.family }, { experimentId: `${spec.id}.d${index}.t${j}`, seed: deriveSeed(seed, 'score', j), about: { step: 'rft-score', collection: spec.id, design: index, task: j } }));
    }
    scored.set(key, { index, spaces });
    return spaces;
  };
  const outStates: RftCollection['states'] = [];
  const proposals: RftProposal[] = [];
  for (let s = 0; s < states.length; s++) {
    const st = states[s]!;
    const spaces = await score(st.design);
    const before = spaces.map((w) => w.grade.score);
    outStates.push({ ...st, scores: before, mean: mean(before) });
    deps.onEvent?.({ type: 'state', state: s, mean: mean(before), path: st.path.map(editText).join('; ') || '(the first design)' });
    const input = { task: spec.tasks[0]!, taskPrompt: spaces[0]!.taskPrompt, current: { version: st.path.length, design: st.design }, first: spec.first, evidence: evidenceOf(spaces[0]!), history: [] };
    for (let g = 0; g < (spec.samples ?? RFT_DEFAULTS.samples); g++) {
      const opt = await optimizeEdit(input, spec.family, { ...deps, recordTokens: true }, {
        experimentId: `${spec.id}.s${s}.p${g}`, seed: deriveSeed(seed, 'propose', s, g), temperature: spec.temperature ?? RFT_DEFAULTS.temperature,
        maxTokens: spec.maxTokens ?? EDIT_TOKENS, catalogue: spec.catalogue, menu, tried: [st.design], about: { step: 'rft-propose', collection: spec.id, state: s, sample: g },
      });
      const edit = opt.proposal ? String(opt.proposal.changes_from_previous) : null;
      let scores: number[] = [];
      let gain = NaN;
      if (opt.design) {
        scores = (await score(opt.design)).map((w) => w.grade.score);
        gain = pairedGain(before, scores);
      }
      const p: RftProposal = { state: s, sample: g, experimentId: opt.experimentId, runId: opt.runId, edit, op: edit ? edit.split(' ')[0]! : null, scores, gain, kept: Number.isFinite(gain) && gain >= minGain };
      proposals.push(p);
      deps.onEvent?.({ type: 'proposal', proposal: p });
    }
  }
  return { states: outStates, proposals, kept: proposals.filter((p) => p.kept).length, designsScored: scored.size };
}

/**
 * The recorded optimizer calls of the kept proposals (prompt and completion ids recorded, no
 * error: `isTrainable`), in proposal order; `callsOf(experimentId)` reads a step's calls (the
 * store's `getExperimentCalls`). A kept proposal whose call has no recorded ids is counted in
 * `missing`. Their SFT sequences: core/training/samples.ts `sftSequences(calls, 'optimizer', ...)`.
 */
export function keptCalls(proposals: readonly RftProposal[], callsOf: (experimentId: string) => readonly ExperimentCall[]): { calls: ExperimentCall[]; missing: number } {
  const calls: ExperimentCall[] = [];
  let missing = 0;
  for (const p of proposals) {
    if (!p.kept) continue;
    const own = callsOf(p.experimentId).filter((c) => c.runId === p.runId && c.role === 'optimizer' && isTrainable(c));
    if (!own.length) missing++;
    calls.push(...own);
  }
  return { calls, missing };
}

/**
 * SFT sequences of `calls` (keptCalls) with the loss on the tokens the model CHOSE under its
 * grammar only (core/training/choiceMask.ts: an op, an agent, a check — not the braces, keys and
 * whitespace the grammar forced), each renormalised over the tokens the grammar allowed there
 * when `pieces` (the model's token texts) are given. `offsetsOf(call)` gives where each
 * completion token starts in the completion (ModelProvider.tokenOffsets); a call without a schema
 * or offsets keeps the loss on every completion token. Returns the sequences and the number of
 * tokens in the loss.
 */
export async function choiceSequences(calls: readonly ExperimentCall[], offsetsOf: ((call: ExperimentCall) => Promise<number[]>) | undefined, pieces: readonly string[] | undefined): Promise<{ sequences: SftSequence[]; lossTokens: number }> {
  const masks = new Map<ExperimentCall, CallMask>();
  for (const call of calls) {
    if (!offsetsOf || !call.jsonSchema || !call.completionTokenIds) continue;
    const offsets = await offsetsOf(call);
    const mask = choiceMask(call.completion, call.jsonSchema, offsets);
    if (!mask) continue;
    const allowed = pieces?.length ? choiceAllowed(call.completion, call.jsonSchema, offsets, call.completionTokenIds, pieces) : undefined;
    masks.set(call, { mask, ...(allowed && { allowed }) });
  }
  const sequences = sftSequences(calls, 'optimizer', () => true, (call) => masks.get(call));
  return { sequences, lossTokens: sequences.reduce((n, q) => n + q.lossMask.reduce((a, b) => a + b, 0), 0) };
}

/** Per op: proposals made, kept, and the mean gain of the valid ones (a table of what the model proposes). */
export function opTable(proposals: readonly RftProposal[]): Array<{ op: string; proposed: number; kept: number; meanGain: number }> {
  const by = new Map<string, RftProposal[]>();
  for (const p of proposals) by.set(p.op ?? '(rejected)', [...(by.get(p.op ?? '(rejected)') ?? []), p]);
  return [...by.entries()].map(([op, ps]) => ({ op, proposed: ps.length, kept: ps.filter((p) => p.kept).length, meanGain: mean(ps.filter((p) => Number.isFinite(p.gain)).map((p) => p.gain)) })).sort((a, b) => b.proposed - a.proposed || (a.op < b.op ? -1 : 1));
}
