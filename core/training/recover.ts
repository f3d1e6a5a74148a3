/**
 * What a killed train loop leaves in its versions folder, and its cleaning. A loop writes each
 * role's version as `<versionsDir>/<loopId>/<role>/iter-<k>.gguf` through a temp file in the
 * same folder (`TrainableModel.writeGguf`: temp + rename) and records the iteration's versions
 * in one transaction after every file is in place (core/training/loop.ts). A kill can leave:
 *
 * - a temp file (`*.tmp`): a write cut short, never a model: removed;
 * - a complete `iter-<k>.gguf` no recorded version points at (killed between the rename and
 *   the commit): removed, not recorded. Recording it would need the metrics of a step that was
 *   never reported and would not restore the optimiser state it was taken with; the iteration's
 *   rollouts are stored, so the resumed loop trains iteration k again from them and writes the
 *   same path — nothing is lost.
 *
 * Only regular files directly inside the loop folder's role folders are touched (links and
 * anything else are left alone), and only in the folder of the loop named.
 */
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { TrainingError } from './errors.ts';

/** What a sweep removed (absolute paths). */
export interface SweepReport {
  temps: string[];
  unrecorded: string[];
}

const LOOP_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const VERSION_FILE = /^iter-\d+\.gguf$/;

/** The folder of loop `loopId` under `versionsDir`. Errors: TrainingError `INTERNAL` for an id that is not one folder name. */
export function loopFolder(versionsDir: string, loopId: string): string {
  if (!LOOP_ID.test(loopId) || loopId.includes('..')) throw new TrainingError('INTERNAL', `train-loop: "${loopId}" is not a loop id`);
  return path.join(path.resolve(versionsDir), loopId);
}

/**
 * Removes the debris of loop `loopId`: every temp file (`*.tmp`) and every version file
 * (`iter-<k>.gguf`) whose absolute path is not in `recorded`, in `<versionsDir>/<loopId>/*\/`.
 * A missing folder is nothing to sweep. The loop must not be running (its own writes would be
 * taken for debris): call it after claiming the loop.
 */
export function sweepLoopFolder(versionsDir: string, loopId: string, recorded: ReadonlySet<string>): SweepReport {
  const debris = loopDebris(versionsDir, loopId, recorded);
  for (const file of [...debris.temps, ...debris.unrecorded]) rmSync(file, { force: true });
  return debris;
}

/** The debris `sweepLoopFolder` would remove, without removing it (for checks and the soak). */
export function loopDebris(versionsDir: string, loopId: string, recorded: ReadonlySet<string>): SweepReport {
  const out: SweepReport = { temps: [], unrecorded: [] };
  const root = loopFolder(versionsDir, loopId);
  for (const roleDir of entries(root)) {
    const dir = path.join(root, roleDir);
    if (!isKind(dir, 'dir')) continue;
    for (const name of entries(dir)) {
      const file = path.join(dir, name);
      if (!isKind(file, 'file')) continue;
      if (name.endsWith('.tmp')) out.temps.push(file);
      else if (VERSION_FILE.test(name) && !recorded.has(file)) out.unrecorded.push(file);
    }
  }
  return out;
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw err;
  }
}

function isKind(p: string, kind: 'dir' | 'file'): boolean {
  try {
    const st = lstatSync(p);
    return kind === 'dir' ? st.isDirectory() : st.isFile();
  } catch {
    return false;
  }
}
