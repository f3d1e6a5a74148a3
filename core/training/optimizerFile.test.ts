/** The optimiser state file beside each version (core/training/optimizerFile.ts). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeOptimizerState, encodeOptimizerState, optimizerFileOf, readOptimizerFile, writeOptimizerFile } from './optimizerFile.ts';

describe('optimizer state files', () => {
  it('round-trips step and tensors bit for bit; the layout is magic, version, step, count, then length + f32 values', () => {
    const state = { step: 3, tensors: [Float32Array.of(0.1, -2.5e-8, 3), Float32Array.of(), Float32Array.of(Math.fround(1 / 3))] };
    const bytes = encodeOptimizerState(state);
    // 4 + 4 + 8 + 4 header bytes, then (4 + 12) + (4 + 0) + (4 + 4).
    expect(bytes.length).toBe(20 + 16 + 4 + 8);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('FLAD');
    expect(decodeOptimizerState(bytes, 'x')).toEqual(state);
    const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-adam-'));
    const version = path.join(dir, 'iter-001.gguf');
    expect(readOptimizerFile(version)).toBeUndefined();
    writeOptimizerFile(optimizerFileOf(version), state);
    expect(readOptimizerFile(version)).toEqual(state);
  });

  it('refuses what is not one, naming the file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-adam-'));
    const version = path.join(dir, 'iter-002.gguf');
    writeFileSync(optimizerFileOf(version), 'not an optimiser state at all');
    expect(() => readOptimizerFile(version)).toThrow(`${optimizerFileOf(version)}: not an optimiser state file (no FLAD magic)`);
    const cut = encodeOptimizerState({ step: 1, tensors: [Float32Array.of(1, 2)] }).subarray(0, 26);
    expect(() => decodeOptimizerState(cut, 'f')).toThrow('truncated in tensor 0');
  });
});
