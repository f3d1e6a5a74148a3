/**
 * The settings `flowlab tune` measured best, per model file and machine, kept in one JSON file
 * (`$FLOWLAB_TUNE_FILE`, else `~/.flowlab/tuned.json`): `{ "version": 1, "entries": { "<file
 * fingerprint>@<machine>": TunedSettings } }`. A file is known by its fingerprint
 * (models/resolve.ts `fingerprintModel`: size and the hash of its first and last MiB), so a moved
 * file keeps its settings and a changed one loses them; a machine by its CPU model, core count
 * and platform, so a copied home folder does not carry another machine's numbers.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fingerprintModel } from './resolve.ts';

/** The best settings measured for one file on one machine. */
export interface TunedSettings {
  threads: number;
  batchSize: number;
  /** Generated tokens per second at these settings. */
  tokensPerSecond: number;
  /** The model file as it was tuned (for people; the key is its fingerprint). */
  file: string;
  /** Epoch ms. */
  measuredAt: number;
}

interface TuneFile {
  version: 1;
  entries: Record<string, TunedSettings>;
}

/** Where the tuned settings are kept. */
export function tuneFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return env.FLOWLAB_TUNE_FILE || path.join(os.homedir(), '.flowlab', 'tuned.json');
}

/** This machine, as tuned settings are keyed: CPU model, logical cores, platform and architecture. */
export function machineKey(): string {
  const cpus = os.cpus();
  return `${cpus[0]?.model.trim() ?? 'cpu'} x${os.availableParallelism()} ${process.platform}-${process.arch}`;
}

function readTuneFile(file: string): TuneFile {
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Partial<TuneFile>;
    if (doc.version === 1 && doc.entries && typeof doc.entries === 'object') return { version: 1, entries: doc.entries };
  } catch {
    // absent or unreadable: nothing tuned (rewritten by the next `flowlab tune`)
  }
  return { version: 1, entries: {} };
}

const keyOf = (modelFile: string) => `${fingerprintModel(modelFile)}@${machineKey()}`;

/** The tuned settings of `modelFile` on this machine, or undefined when it was never tuned here (or has changed since). */
export function tunedSettings(modelFile: string, file = tuneFilePath()): TunedSettings | undefined {
  const entry = readTuneFile(file).entries[keyOf(modelFile)];
  if (!entry || !Number.isInteger(entry.threads) || entry.threads < 1 || !Number.isInteger(entry.batchSize) || entry.batchSize < 1) return undefined;
  return entry;
}

/** Stores `settings` as the best for `modelFile` on this machine (the file is written whole, through a temporary file and a rename). */
export function saveTunedSettings(modelFile: string, settings: Omit<TunedSettings, 'file' | 'measuredAt'>, file = tuneFilePath()): TunedSettings {
  const doc = readTuneFile(file);
  const entry: TunedSettings = { ...settings, file: path.resolve(modelFile), measuredAt: Date.now() };
  doc.entries[keyOf(modelFile)] = entry;
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(doc, null, 2) + '\n');
  renameSync(tmp, file);
  return entry;
}
