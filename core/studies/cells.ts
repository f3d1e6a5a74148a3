/**
 * A plan's cells and training units, with the ids that make a study resumable: the study id is
 * the plan's name and a hash of its canonical form (the same plan resumes the same study; an
 * edited plan is a new study), each cell's experiment id and each training unit's loop id are
 * derived from it. Pure.
 */
import { fnv1a32 } from '../random.ts';
import type { StudyCondition, StudyModel, StudyPlan, StudyZone } from './plan.ts';

/** One evaluation cell: a condition run on a zone with a seed and a model, stored as one `run` experiment. */
export interface StudyCell {
  /** `<condition>/<zone>/s<seed>/<model>`. */
  key: string;
  experimentId: string;
  condition: StudyCondition;
  zone: StudyZone;
  seed: number;
  model: StudyModel;
  /** The training unit whose versions this cell evaluates (training conditions only). */
  unitKey?: string;
}

/** One train loop of a training condition, run once per seed and model, before its cells. */
export interface TrainingUnit {
  /** `<condition>/s<seed>/<model>`. */
  key: string;
  condition: StudyCondition;
  seed: number;
  model: StudyModel;
}

/** JSON with sorted keys: the same plan gives the same text whatever the key order. */
export function canonicalJson(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(canonicalJson).join(',')}]`;
  if (x && typeof x === 'object') return `{${Object.keys(x).sort().filter((k) => (x as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson((x as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(x);
}

/**
 * The study id of a plan: `st-<name>-<8 hex>`, the hex being FNV-1a (core/random.ts) of the
 * canonical plan and `salt` (the resolved workflow and model files, so a plan pointed at another
 * model is another study).
 */
export function studyIdOf(plan: StudyPlan, salt = ''): string {
  return `st-${plan.name}-${fnv1a32(canonicalJson(plan) + '\n' + salt).toString(16).padStart(8, '0')}`;
}

const trains = (c: StudyCondition) => c.train !== undefined;

/** The plan's training units, in plan order (model, seed, condition). */
export function trainingUnits(plan: StudyPlan): TrainingUnit[] {
  return plan.models.flatMap((model) => plan.seeds.flatMap((seed) => plan.conditions.filter(trains).map((condition) => ({ key: `${condition.id}/s${seed}/${model.id}`, condition, seed, model }))));
}

/**
 * The plan's cells, in the order a study runs them: per model and seed, every condition on every
 * zone (conditions in plan order, so the baseline's cells and the untrained ones come before the
 * trained ones that wait for their train loop). `skipZones`: zone ids left out (an optional zone
 * whose dataset this build lacks).
 */
export function studyCells(plan: StudyPlan, studyId: string, skipZones: ReadonlySet<string> = new Set()): StudyCell[] {
  const cells: StudyCell[] = [];
  for (const model of plan.models) {
    for (const seed of plan.seeds) {
      const ordered = [...plan.conditions.filter((c) => !trains(c)), ...plan.conditions.filter(trains)];
      for (const condition of ordered) {
        for (const zone of plan.zones) {
          if (skipZones.has(zone.id)) continue;
          const key = `${condition.id}/${zone.id}/s${seed}/${model.id}`;
          cells.push({ key, experimentId: `${studyId}.${key.replaceAll('/', '.')}`, condition, zone, seed, model, ...(trains(condition) && { unitKey: `${condition.id}/s${seed}/${model.id}` }) });
        }
      }
    }
  }
  return cells;
}

/** The loop id of a training unit's `attempt`-th train loop (0 first; a unit stopped midway trains again with the next). */
export function loopIdOf(studyId: string, unitKey: string, attempt = 0): string {
  return `${studyId}.${unitKey.replaceAll('/', '.')}.tl${attempt}`;
}
