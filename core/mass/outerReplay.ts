/**
 * Replaying an outer loop (`flowlab rank --replay`, `flowlab rsi --replay`) without the model:
 * the loop runs again from its stored settings (outerLoop.ts) into a scratch in-memory store and
 * a scratch folder, every step's model calls (runs, tournament verdicts, held-out runs and
 * judgements) served from the recording's calls by `providerFor` (normally models/replay's
 * ReplayProvider over `store.getExperimentCalls(step)`, token ids included), every trained
 * version read back from the recording's store instead of training (training needs the weights),
 * and then compared with the recording:
 *
 * - every record under the loop id (settings, rankings with their cuts and quarantine, the base,
 *   each cycle's report with its selections and held-out comparison, the halt), as canonical JSON;
 * - every file the replay wrote (environments' guard records and protected files, exports,
 *   manifests, `state.json`, `halt.json`) against the loop's folder, byte for byte.
 *
 * Paths under the scratch folder are written as the loop's own folder before comparing (the one
 * thing a replay must change). rsi replays the cycles the recording finished (and the one it
 * halted in); records of an unfinished cycle are counted as such, not compared.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ModelProvider } from '../model/provider.ts';
import { openStore, type Store } from '../store/index.ts';
import type { Trainer } from '../training/port.ts';
import { MassError } from './errors.ts';
import { outerSettingsOf, startRank, startRsi, type OuterSettings } from './outerLoop.ts';
import { compareRecords } from './replay.ts';
import { OUTER_CYCLE, OUTER_HALT, OUTER_RANKING, type OuterTaskRanking } from './outerRecords.ts';
import type { RankResult } from './rank.ts';
import type { RsiReport } from './rsi.ts';

export interface OuterReplay {
  loopId: string;
  command: OuterSettings['command'];
  /** rsi: the cycles replayed. */
  cycles: number;
  records: number;
  matched: number;
  /** Records of a cycle the recording did not finish (not replayed). */
  unfinished: number;
  files: number;
  filesMatched: number;
  /** `<kind> <key>: <what>` or `file <relative path>: <what>` for each difference. */
  mismatches: string[];
  /** Model files the replay loaded (0: no model was used). */
  modelsLoaded: number;
  wallSeconds: number;
}

/** What the replay ran, with paths written as the loop's folder (`relocate` does the same to any text). */
export interface OuterReplayResult {
  replay: OuterReplay;
  rank?: RankResult;
  rsi?: RsiReport;
  outDir: string;
  relocate: (text: string) => string;
}

/** A provider that refuses every call: the replay's model, so a call that was not recorded is loud. */
const noModel: ModelProvider = {
  name: 'no model (replay)',
  generate: () => Promise.reject(new MassError('HALTED', 'replay asked for a model call that was not recorded')),
  modelsLoaded: () => 0,
  dispose: async () => {},
};
const noTrainer: Trainer = { load: () => Promise.reject(new MassError('HALTED', 'a replay never trains')) };

function filesUnder(dir: string, rel = ''): string[] {
  if (!existsSync(path.join(dir, rel))) return [];
  return readdirSync(path.join(dir, rel)).sort().flatMap((name) => {
    const r = path.join(rel, name);
    return statSync(path.join(dir, r)).isDirectory() ? filesUnder(dir, r) : [r];
  });
}

/**
 * Replays loop `loopId` of `store` (see the module comment). Writes nothing to `store` or to the
 * loop's folder. Errors: MassError `NOT_FOUND` (no settings stored for the loop: it ran before
 * loops recorded them, or never), and model errors from `providerFor` (e.g. REPLAY_MISSING).
 */
export async function replayOuterLoop(store: Store, loopId: string, deps: { providerFor: (experimentId: string) => ModelProvider }): Promise<OuterReplayResult> {
  const t0 = performance.now();
  const s = outerSettingsOf(store, loopId);
  if (!s) throw new MassError('NOT_FOUND', `no outer loop ${loopId} with stored settings in ${store.file}`, { field: 'loopId' });
  const stored = store.mass.list(loopId);
  const halt = stored.find((r) => r.kind === OUTER_HALT)?.value as { cycle: number | null } | undefined;
  const finished = stored.filter((r) => r.kind === OUTER_CYCLE).length;
  const cycles = Math.max(finished, halt?.cycle ?? 0);
  const outDir = s.options.outDir;
  const scratchDir = mkdtempSync(path.join(tmpdir(), 'flowlab-outer-replay-'));
  const relocate = (text: string) => text.split(scratchDir).join(outDir);
  const scratch = openStore(':memory:');
  const used: ModelProvider[] = [];
  const providerFor = (id: string) => {
    const p = deps.providerFor(id);
    used.push(p);
    return p;
  };
  try {
    const settings: OuterSettings = { ...s, options: { ...s.options, outDir: scratchDir } };
    const common = { store: scratch, providerFor, championStore: store };
    const result: Omit<OuterReplayResult, 'replay'> = { outDir, relocate };
    if (s.command === 'rank') result.rank = await startRank({ ...common, provider: noModel }, settings);
    else result.rsi = await startRsi({ ...common, trainer: noTrainer, makeProvider: async () => noModel, recordedVersion: (id) => store.weights.find(id) }, settings, cycles);

    // The settings record is compared as the recording wrote it (the scratch folder relocated).
    const unfinishedRec = (r: { kind: string; value: unknown }) => s.command === 'rsi' && r.kind === OUTER_RANKING && ((r.value as OuterTaskRanking).cycle ?? 0) > cycles;
    const original = stored.filter((r) => !unfinishedRec(r));
    const { records, matched, mismatches } = compareRecords(original, scratch.mass.list(loopId), relocate);

    let files = 0;
    let filesMatched = 0;
    for (const rel of filesUnder(scratchDir)) {
      files++;
      const mine = path.join(outDir, rel);
      if (!existsSync(mine)) mismatches.push(`file ${rel}: missing in ${outDir}`);
      else if (relocate(readFileSync(path.join(scratchDir, rel), 'utf8')) !== readFileSync(mine, 'utf8')) mismatches.push(`file ${rel}: differs`);
      else filesMatched++;
    }
    return {
      ...result,
      replay: {
        loopId, command: s.command, cycles, records, matched, unfinished: stored.length - original.length, files, filesMatched, mismatches,
        modelsLoaded: used.reduce((n, p) => n + p.modelsLoaded(), 0), wallSeconds: (performance.now() - t0) / 1000,
      },
    };
  } finally {
    scratch.close();
    rmSync(scratchDir, { recursive: true, force: true });
  }
}
