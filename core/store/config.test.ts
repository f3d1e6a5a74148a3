/**
 * Stored configs come back decoded, never cast (issue 28): today's shapes decode as written (old
 * databases open), a corrupted `config_json` or train-loop `plan_json` is a located
 * `CORRUPT_RECORD` naming the row and the field, and no file in the tree casts a stored config.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir, thrownBy } from '../../test/fixtures.ts';
import { loopPlanOf } from '../experiments/index.ts';
import { CONFIG_VERSION, decodeExperimentConfig, migrateConfig, openStore, storedModels, storedRollouts, StoreError, computeWorkflowHash, type NewExperiment, type SqliteStore } from './index.ts';

const MODELS = { models: { default: '/m/tiny.gguf' }, roleModels: { solver: 'default' }, gpu: false, fingerprints: { default: 'sha256:ab' } };

function experiment(id: string, config: unknown): NewExperiment {
  const yaml = 'name: demo\nsteps: []\n';
  return { id, kind: 'run', workflowName: 'demo', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml), dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, config, tasks: [{ taskIndex: 0, taskId: 't0', input: 'q' }] };
}

let dir: string;
let file: string;
let store: SqliteStore;
beforeEach(() => {
  dir = tempDir('config-codec');
  file = path.join(dir, 'lab.db');
  store = openStore(file);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes `text` into a stored row's JSON column behind the store's back (a corrupted file). */
function corrupt(sql: string, text: string, id: string): void {
  const db = new Database(file);
  db.prepare(sql).run(text, id);
  db.close();
}

describe('the experiment config codec', () => {
  it('decodes the shapes Flowlab writes today unchanged (version 1, no `v` written)', () => {
    const run = { workflowFile: '/w/a.yaml', offset: 2, dataDir: '/d', models: MODELS, cards: { selection: 'all', ids: ['c1'], budgetTokens: 256 }, roleVersions: ['solver=v-1'], source: 'lab' };
    const blame = { offset: 0, models: MODELS, inject: ['solver=wrong@0.5'], simulated: true };
    const rollouts = { offset: 0, models: MODELS, rollouts: { group: 4, temperature: 0.8, mode: 'multi-agent', learningRoles: ['solver'] } };
    const mass = { models: MODELS, mass: { loopId: 'evo-1', kind: 'judge' } };
    for (const [id, config] of [['r', run], ['b', blame], ['o', rollouts], ['m', mass]] as const) {
      store.createExperiment(experiment(id, config));
      expect(store.getExperiment(id).config).toEqual(config);
    }
    expect(CONFIG_VERSION).toBe(1);
    expect(storedModels(store.getExperiment('r'))).toEqual(MODELS);
    expect(storedRollouts(store.getExperiment('o'))).toEqual(rollouts.rollouts);
    // A config never given stays null.
    store.createExperiment(experiment('n', undefined));
    expect(store.getExperiment('n').config).toBeNull();
  });

  it('migrations run in order from a row\'s version to the current one (a toy v3 that renames `inject` and adds a field)', () => {
    const steps = {
      2: (c: Record<string, unknown>) => ({ ...c, v: 2, faults: c.inject ?? [] }),
      3: (c: Record<string, unknown>) => ({ ...Object.fromEntries(Object.entries(c).filter(([k]) => k !== 'inject')), v: 3, seedsPerTask: 1 }),
    };
    expect(migrateConfig({ inject: ['solver=wrong@1'], offset: 2 }, 1, 3, steps)).toEqual({ offset: 2, faults: ['solver=wrong@1'], v: 3, seedsPerTask: 1 });
    expect(migrateConfig({ v: 2, faults: [] }, 2, 3, steps)).toEqual({ faults: [], v: 3, seedsPerTask: 1 });
    expect(migrateConfig({ offset: 0 }, 1, 1, {})).toEqual({ offset: 0 });
    expect(() => migrateConfig({}, 1, 2, {})).toThrow('migrateConfig: no migration to config version 2');
  });

  it.each<[string, string, string]>([
    ['not JSON', '{"models": ', /^experiment e1: config: not JSON \(/.source],
    ['not an object', '[1, 2]', '^experiment e1: config is not an object \\(an array\\)$'],
    ['a field of the wrong type', '{"offset": "two"}', '^experiment e1: config.offset: Invalid input: expected number, received string$'],
    ['a nested field of the wrong type', '{"models": {"models": {"default": 3}}}', '^experiment e1: config.models.models.default: Invalid input: expected string, received number$'],
    ['a fault list that is not strings', '{"inject": "solver=wrong@1"}', '^experiment e1: config.inject: Invalid input: expected array, received string$'],
    ['a version from a newer Flowlab', '{"v": 9}', '^experiment e1: config.v: version 9 was written by a newer Flowlab \\(this one reads up to 1\\)$'],
  ])('a corrupted config column (%s) is CORRUPT_RECORD naming the experiment and the field', (_what, text, message) => {
    store.createExperiment(experiment('e1', { models: MODELS }));
    corrupt('UPDATE experiments SET config_json = ? WHERE id = ?', text, 'e1');
    const err = thrownBy(StoreError, () => store.getExperiment('e1'));
    expect(err.code).toBe('CORRUPT_RECORD');
    expect(err.message).toMatch(new RegExp(message));
  });

  it('what a kind needs whole is checked when it reads it: an incomplete ModelConfig names the missing field', () => {
    store.createExperiment(experiment('e2', { models: { models: { default: '/m/x.gguf' } } }));
    const exp = store.getExperiment('e2'); // the row itself reads (a partial models block is still the right type)
    const err = thrownBy(StoreError, () => storedModels(exp));
    expect([err.code, err.message]).toEqual(['CORRUPT_RECORD', 'experiment e2: config.models.roleModels: Invalid input: expected record, received undefined']);
    expect(decodeExperimentConfig({ rollouts: { group: 2 } }, 'x')).toEqual({ rollouts: { group: 2 } });
    expect(thrownBy(StoreError, () => storedRollouts({ id: 'x', config: { rollouts: { group: 2 } } })).message).toBe('experiment x: config.rollouts.temperature: Invalid input: expected number, received undefined');
  });

  it('a train loop\'s plan is decoded too: a corrupted plan_json names the loop and the field', () => {
    const plan = {
      workflow: { text: 'name: w\n' }, roles: ['writer'], startVersions: {}, models: MODELS, dataset: 'learn-word', split: 'train', heldoutSplit: 'heldout', heldout: 0,
      maxGradNorm: 1, group: 2, iterations: 1, tasksPerIteration: 1, lr: 3e-4, kl: 0.02, temperature: 1, heldoutSamples: 1, heldoutTemperature: 1, seed: 0,
    };
    store.trainLoops.create({ id: 'tl-1', iterations: 1, versionsDir: dir, plan, state: {} });
    expect(loopPlanOf(store.trainLoops.get('tl-1'))).toEqual(plan);
    corrupt('UPDATE train_loops SET plan_json = ? WHERE id = ?', JSON.stringify({ ...plan, iterations: 'one' }), 'tl-1');
    const err = thrownBy(StoreError, () => loopPlanOf(store.trainLoops.get('tl-1')));
    expect([err.code, err.message]).toEqual(['CORRUPT_RECORD', 'train loop tl-1: plan.iterations: Invalid input: expected number, received string']);
  });
});

/** Every TypeScript file of the tree (tests included), repository-relative. */
function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(REPO_ROOT, rel), { withFileTypes: true })) {
      const p = path.join(rel, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.tsx?$/.test(e.name)) out.push(p);
    }
  };
  for (const room of ['core', 'models', 'host', 'cli', 'electron', 'renderer', 'test', 'e2e', 'bench', 'scripts']) walk(room);
  return out;
}

describe('no stored config is cast', () => {
  it('no file casts an experiment config or a train loop plan (`config as`, `config ?? {}) as`, `.plan as`, `as unknown as` on them)', () => {
    // A cast of a stored row's JSON column: `<x>.config as …`, `(config ?? {}) as …`, `config as unknown as …`, `<loop>.plan as …`.
    const cast = /\bconfig\b(\s*\?\?\s*\{\s*\})?\)*\s+as\s+(?!const\b)|\.plan\)*\s+as\s+(?!const\b)/;
    const found: string[] = [];
    for (const f of sourceFiles()) {
      if (f === path.join('core', 'store', 'config.test.ts')) continue; // this file names the patterns
      readFileSync(path.join(REPO_ROOT, f), 'utf8').split('\n').forEach((line, i) => {
        if (/^\s*(\*|\/\/)/.test(line)) return; // comments may say "config as `flowlab rollouts` writes it"
        if (cast.test(line.replace(/'[^']*'|`[^`]*`/g, "''"))) found.push(`${f}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });
});
