/**
 * The champion timeline of an evolution, read from its stored records (pure): per task, each
 * iteration with the version it ran (or the rejected proposal and why), its verdicts with
 * rationales and orientation, and the champion after it; plus the designs and the diff between
 * any two versions. Used by `flowlab evolve --timeline` and the lab's MASS view.
 */
import type { MassRecord } from '../store/index.ts';
import { diffMassDesigns, parseMassDesign, type DesignDiff } from './design.ts';
import { MassError } from './errors.ts';
import type { EvolutionSettings } from './inner.ts';
import type { MassDesign } from './types.ts';

export interface TimelineVerdict {
  kind: 'baseline' | 'arbitration' | 'direct';
  against: string;
  candidateSide: 'A' | 'B';
  winner: 'A' | 'B' | 'tie';
  candidateWon: boolean;
  valid: boolean;
  rationale: string;
  experimentId: string;
}

export interface TimelineIteration {
  iteration: number;
  /** The version this iteration ran; null when the optimizer's proposal was rejected. */
  version: number | null;
  /** The rejected proposal's issues (`CODE path: message`). */
  rejected?: string[];
  /** The edit that made this version, as text (edit optimizer, edits.ts `editText`), e.g. `retry hop 1 max 2`. */
  edit?: string;
  /** The workspace's external grade (the task's grader), when a version ran. */
  score?: number;
  /** With a selection set (EvolveSpec.selection): the version's grade on each of its k tasks, in order (the first is `score`). */
  selectionScores?: number[];
  /** With a selection set: each comparison's tally over the k pairs and whether it accepted the candidate. */
  selections?: Array<{ against: string; wins: number; losses: number; ties: number; accepted: boolean }>;
  verdicts: TimelineVerdict[];
  champion: number | null;
  /** True when this iteration made a new champion. */
  championChanged: boolean;
}

export interface TimelineDesign {
  version: number;
  parent: number | null;
  iteration: number;
  source: 'first' | 'optimizer';
  text: string;
}

export interface TaskTimeline {
  taskIndex: number;
  taskId: string;
  baselineScore: number | null;
  champion: number | null;
  iterations: TimelineIteration[];
  designs: TimelineDesign[];
}

export interface EvolutionTimeline {
  evolutionId: string;
  dataset: string;
  rule: 'baseline' | 'direct';
  iterations: number;
  tasks: TaskTimeline[];
}

type Rec = Record<string, unknown>;

/** The timeline of one evolution from `records` (its `Store.mass.list(id)`). Errors: MassError `NOT_FOUND` (no settings record). */
export function timelineOf(evolutionId: string, records: readonly MassRecord[]): EvolutionTimeline {
  const settings = records.find((r) => r.kind === 'evolution' && r.key === 'settings')?.value as EvolutionSettings | undefined;
  if (!settings) throw new MassError('NOT_FOUND', `no evolution ${evolutionId}`, { field: 'evolutionId' });
  const of = (kind: string, t: number) => records.filter((r) => r.kind === kind && r.taskIndex === t).map((r) => ({ key: r.key, v: r.value as Rec }));
  const tasks: TaskTimeline[] = settings.tasks.map((task, t) => {
    const spaces = new Map(of('workspace', t).map(({ key, v }) => [key, v]));
    const verdicts = of('verdict', t).map(({ v }) => v);
    const proposals = new Map(of('proposal', t).map(({ v }) => [v.iteration as number, v]));
    const changes = new Set(of('champion', t).map(({ v }) => v.iteration as number));
    const iterations: TimelineIteration[] = of('iteration', t).map(({ v }) => {
      const i = v.iteration as number;
      const version = v.version as number | null;
      const it: TimelineIteration = { iteration: i, version, verdicts: [], champion: v.champion as number | null, championChanged: changes.has(i) };
      if (version === null) {
        const issues = (proposals.get(i)?.issues as Array<{ code: string; path: string; message: string }> | undefined) ?? [];
        it.rejected = issues.map((x) => `${x.code}${x.path ? ` ${x.path}` : ''}: ${x.message}`);
      } else {
        const ws = spaces.get(`t${t}/v${version}`);
        if (ws) it.score = ws.score as number;
        const more = [...spaces.entries()].filter(([key]) => key.startsWith(`t${t}/v${version}/s`)).sort(([a], [b]) => Number(a.slice(a.lastIndexOf('/s') + 2)) - Number(b.slice(b.lastIndexOf('/s') + 2)));
        if (ws && more.length) it.selectionScores = [ws.score as number, ...more.map(([, w]) => w.score as number)];
        const sels = of('selection', t).map(({ v }) => v).filter((x) => x.iteration === i && x.candidate === version);
        if (sels.length) it.selections = sels.map((x) => ({ against: x.against as string, wins: x.wins as number, losses: x.losses as number, ties: x.ties as number, accepted: x.candidateWon as boolean }));
        const p = proposals.get(i)?.proposal as { edit?: unknown; changes_from_previous?: unknown } | null | undefined;
        if (p?.edit && typeof p.changes_from_previous === 'string') it.edit = p.changes_from_previous;
        it.verdicts = verdicts.filter((x) => x.iteration === i && x.candidate === version).map((x) => ({
          kind: x.kind as TimelineVerdict['kind'], against: x.against as string, candidateSide: x.candidateSide as 'A' | 'B', winner: x.winner as TimelineVerdict['winner'],
          candidateWon: x.candidateWon as boolean, valid: x.valid as boolean, rationale: x.rationale as string, experimentId: x.experimentId as string,
        }));
      }
      return it;
    });
    const designs: TimelineDesign[] = of('design', t).map(({ v }) => ({ version: v.version as number, parent: v.parent as number | null, iteration: v.iteration as number, source: v.source as TimelineDesign['source'], text: v.text as string }));
    const result = records.find((r) => r.kind === 'result' && r.key === `t${t}`)?.value as Rec | undefined;
    const base = spaces.get(`t${t}/baseline`);
    return {
      taskIndex: t,
      taskId: task.id,
      baselineScore: base ? (base.score as number) : null,
      champion: result ? (result.champion as number | null) : (iterations.at(-1)?.champion ?? null),
      iterations,
      designs,
    };
  });
  return { evolutionId, dataset: settings.dataset, rule: settings.rule, iterations: settings.iterations, tasks };
}

/** A stored design version of task `t`, parsed back. Errors: MassError `NOT_FOUND`. */
export function storedDesign(records: readonly MassRecord[], t: number, version: number): MassDesign {
  const settings = records.find((r) => r.kind === 'evolution' && r.key === 'settings')?.value as EvolutionSettings | undefined;
  const rec = records.find((r) => r.kind === 'design' && r.key === `t${t}/v${version}`);
  if (!settings || !rec) throw new MassError('NOT_FOUND', `no design v${version} of task ${t}`, { field: 'version' });
  const parsed = parseMassDesign((rec.value as Rec).design, settings.catalogue, settings.limits);
  if (!parsed.ok) throw new MassError('INVALID_DESIGN', `stored design v${version} of task ${t} does not parse: ${parsed.issues[0]?.message}`);
  return parsed.design;
}

/** The diff from version `a` to version `b` of task `t` (any two versions, not only parent and child). */
export function designDiffOf(records: readonly MassRecord[], t: number, a: number, b: number): DesignDiff {
  return diffMassDesigns(storedDesign(records, t, a), storedDesign(records, t, b));
}
