/**
 * File names built from workflow or task text stay inside their folder. `ROLE_NAMES` is a table
 * of hostile role names and the file-name part each must become; the CLI test stores a rollouts
 * experiment whose learning role is `../../escaped-role` and exports it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { safeFileName } from '../../core/fileNames.ts';
import { asNodeId, asRoleName, HUMAN } from '../../core/ids.ts';
import { openStore } from '../../core/store/index.ts';
import { versionFile } from '../../core/training/index.ts';
import { main } from '../../cli/main.ts';
import { capture, modelCall, newExperiment, runRecord, scratchDir } from '../fixtures.ts';

const dir = scratchDir('names');

/** (role or node text, what `safeFileName` must give; `~` stands for the 8-hex hash suffix). */
export const ROLE_NAMES: ReadonlyArray<[string, string]> = [
  ['solver', 'solver'],
  ['writer-2.v1', 'writer-2.v1'],
  ['../../escaped-role', '___.._escaped-role-~'],
  ['..', '__-~'],
  ['.hidden', '_hidden-~'],
  ['a/b', 'a_b-~'],
  ['a\\b', 'a_b-~'],
  ['C:\\x', 'C__x-~'],
  ['nul\u0000role', 'nul_role-~'],
  ['CON', 'CON-~'],
  ['', '_-~'],
  ['x'.repeat(300), `${'x'.repeat(100)}-~`],
];

describe('safeFileName', () => {
  for (const [text, want] of ROLE_NAMES) {
    it(`${JSON.stringify(text.slice(0, 40))} -> ${want.slice(0, 40)}`, () => {
      const got = safeFileName(text);
      expect(got.replace(/-[0-9a-f]{8}$/, '-~')).toBe(want);
      expect(got).not.toMatch(/[/\\\0]/);
      expect(path.basename(got)).toBe(got);
      expect(got.startsWith('.')).toBe(false);
    });
  }

  it('two texts that map alike get different names', () => {
    expect(safeFileName('a/b')).not.toBe(safeFileName('a_b'));
    expect(safeFileName('a/b')).not.toBe(safeFileName('a\\b'));
  });

  it('unique: false maps without the hash (train-loop folders), still one plain name', () => {
    expect(['a/b c', '..', '../x', 'CON', ''].map((t) => safeFileName(t, { unique: false }))).toEqual(['a_b_c', '__', '___x', '_CON', '_']);
  });

  it("a train-loop version of role '..' stays in its loop's role folder", () => {
    const file = versionFile('/v', 'loop-1', '..', 1);
    expect(path.dirname(path.dirname(file))).toBe('/v/loop-1');
  });
});

describe('flowlab export with a hostile role name', () => {
  it('writes every file inside --out', async () => {
    const role = '../../escaped-role';
    const db = path.join(dir(), 'x.db');
    const store = openStore(db);
    const exp = store.createExperiment(newExperiment({ kind: 'rollouts', limit: 1, config: { models: { models: { default: '/m/a.gguf' } }, rollouts: { group: 1, temperature: 0.8, mode: 'single', learningRoles: [role] } } }));
    const run = runRecord(exp.id, 0);
    store.saveRun(run, [{
      runId: run.runId, nodeId: asNodeId('solve'), attempt: 1, seq: 0, kind: 'agent', role: asRoleName(role), wiredBy: HUMAN, runBy: asRoleName(role),
      inputs: {}, output: 'x', status: 'ok', calls: [modelCall({ role: asRoleName(role) })], startedAt: 0, endedAt: 1,
    }]);
    store.improve.saveAdvantages([{ runId: run.runId, role, mode: 'ladder', groupKey: 'g', reward: 1, advantage: 0.5, groupMean: 0.5, groupStd: 0.5, groupSize: 1 }]);
    store.close();
    const out = path.join(dir(), 'a', 'b', 'out');
    const io = capture();
    expect(await main(['export', exp.id, '--out', out, '--db', db], io)).toBe(0);
    const files = readdirSync(out).sort();
    const base = safeFileName(role);
    expect(files).toEqual(['manifest.json', `${base}.grpo.jsonl`, `${base}.sft.jsonl`].sort());
    expect(existsSync(path.join(dir(), 'a', 'escaped-role.grpo.jsonl'))).toBe(false);
    expect(JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8')).roleFiles).toEqual({ [role]: { grpo: `${base}.grpo.jsonl`, sft: `${base}.sft.jsonl` } });
  });
});
