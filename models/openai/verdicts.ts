/**
 * The probe's verdicts about endpoints (`flowlab probe`), kept in one JSON file so every later
 * command's provider reads them: `$FLOWLAB_PROBES`, else `~/.flowlab/probes.json`. Keyed by
 * endpoint id (`<base-url>#<model>`, core/model/endpoint.ts `endpointId`). Holds no key or
 * other secret: a verdict, the time it was taken and the evidence lines.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What one probe found about one endpoint. */
export interface ProbeVerdicts {
  /** `enforced`: every schema-constrained reply was valid under a schema no unconstrained reply meets; `ignored`: one was not. */
  schema: 'enforced' | 'ignored' | 'failed';
  /** Two calls with one seed (temperature 1): the same text or not. */
  seed: 'same text' | 'different text' | 'failed';
  /** Usage counts present and consistent with the reply (completion tokens = max_tokens when cut off there, total = sum). */
  usage: 'matches text' | 'missing' | 'mismatch' | 'failed';
  /** ISO time of the probe. */
  probedAt: string;
  /** One line of evidence per check. */
  details: string[];
}

/** The verdicts file: `$FLOWLAB_PROBES`, else `~/.flowlab/probes.json`. */
export function probesFile(env: NodeJS.ProcessEnv = process.env): string {
  return env['FLOWLAB_PROBES'] ? path.resolve(env['FLOWLAB_PROBES']) : path.join(os.homedir(), '.flowlab', 'probes.json');
}

/** Every stored verdict by endpoint id ({} when the file is missing or unreadable). */
export function readVerdicts(file = probesFile()): Record<string, ProbeVerdicts> {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, ProbeVerdicts>) : {};
  } catch {
    return {};
  }
}

/** Stores `verdicts` for endpoint `id` (replacing an older probe's), written atomically (temp file + rename). */
export function writeVerdicts(id: string, verdicts: ProbeVerdicts, file = probesFile()): void {
  const all = readVerdicts(file);
  all[id] = verdicts;
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`);
  renameSync(tmp, file);
}
