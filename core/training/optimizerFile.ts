/**
 * The optimiser state beside each version file (`iter-NNN.gguf.adam`), so a resumed train loop
 * continues with Adam's moments as they were after that iteration instead of zeros — a resumed
 * loop then writes the same bytes as an uninterrupted one (docs/laptop-rl.md "Reproducibility").
 *
 * Layout (little-endian): `FLAD` magic, u32 format version (1), f64 step, u32 tensor count, then
 * per tensor a u32 length and that many f32 values. Written through a `*.tmp` file and renamed.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import { TrainingError } from './errors.ts';
import type { OptimizerState } from './port.ts';

const MAGIC = 0x44414c46; // 'FLAD' read as a little-endian u32

/** The optimiser file of a version file. */
export const optimizerFileOf = (versionFile: string) => `${versionFile}.adam`;

/** `state` as bytes (the layout above). */
export function encodeOptimizerState(state: OptimizerState): Buffer {
  const size = 4 + 4 + 8 + 4 + state.tensors.reduce((n, t) => n + 4 + 4 * t.length, 0);
  const buf = Buffer.alloc(size);
  let o = buf.writeUInt32LE(MAGIC, 0);
  o = buf.writeUInt32LE(1, o);
  o = buf.writeDoubleLE(state.step, o);
  o = buf.writeUInt32LE(state.tensors.length, o);
  for (const t of state.tensors) {
    o = buf.writeUInt32LE(t.length, o);
    Buffer.from(t.buffer, t.byteOffset, t.byteLength).copy(buf, o);
    o += t.byteLength;
  }
  return buf;
}

/** The state in `bytes`. Throws TrainingError `INTERNAL` naming `where` when they are not one. */
export function decodeOptimizerState(bytes: Buffer, where: string): OptimizerState {
  const bad = (what: string) => new TrainingError('INTERNAL', `${where}: not an optimiser state file (${what})`);
  if (bytes.length < 20 || bytes.readUInt32LE(0) !== MAGIC) throw bad('no FLAD magic');
  if (bytes.readUInt32LE(4) !== 1) throw bad(`format version ${bytes.readUInt32LE(4)}`);
  const step = bytes.readDoubleLE(8);
  const count = bytes.readUInt32LE(16);
  const tensors: Float32Array[] = [];
  let o = 20;
  for (let i = 0; i < count; i++) {
    if (o + 4 > bytes.length) throw bad(`truncated at tensor ${i}`);
    const n = bytes.readUInt32LE(o);
    o += 4;
    if (o + 4 * n > bytes.length) throw bad(`truncated in tensor ${i}`);
    const t = new Float32Array(n);
    Buffer.from(t.buffer).set(bytes.subarray(o, o + 4 * n));
    tensors.push(t);
    o += 4 * n;
  }
  if (o !== bytes.length) throw bad(`${bytes.length - o} trailing bytes`);
  return { step, tensors };
}

/** Writes `state` as `file` atomically (temp + fsync + rename). */
export function writeOptimizerFile(file: string, state: OptimizerState): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, encodeOptimizerState(state));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** The state stored beside `versionFile`, or undefined when there is none (a version from before this file existed). */
export function readOptimizerFile(versionFile: string): OptimizerState | undefined {
  const file = optimizerFileOf(versionFile);
  return existsSync(file) ? decodeOptimizerState(readFileSync(file), file) : undefined;
}
