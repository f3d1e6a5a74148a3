import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { newExperiment, tempDir } from '../test/fixtures.ts';
import { cli } from '../test/cli.ts';

describe('flowlab evolve: arguments (no model needed)', () => {
  it('asks for a dataset, refuses a family MASS does not know, and lists a first design’s issues by path', async () => {
    const none = await cli(['evolve']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('missing <dataset> (or --replay / --timeline <evolution-id>)');

    const gsm = await cli(['evolve', 'gsm8k', '--model', '/nowhere.gguf']);
    expect(gsm.code).toBe(1);
    expect(gsm.err).toContain('no MASS task family for dataset "gsm8k"; known: learn-tool, learn-word, learn-design, learn-unit [UNKNOWN_FAMILY]');

    const file = path.join(tempDir('evolve-args'), 'v0.json');
    writeFileSync(file, JSON.stringify({ agents: [{ agent_id: 'picker', role: 'Picker', instruction: 'Pick.', contract: { fields: ['tool'], checks: ['no_such_check'] } }], hops: ['ghost'] }));
    const bad = await cli(['evolve', 'learn-tool', '--model', '/nowhere.gguf', '--design', file]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('UNKNOWN_CHECK agents[0].contract.checks[0]: unknown check "no_such_check"');
    expect(bad.err).toContain('UNKNOWN_AGENT hops[0].agent_id: hop calls "ghost"');
    expect(bad.err).toContain('[BAD_FILE]');

    // Refused before any model loads (the model path does not exist).
    const edit = await cli(['evolve', 'learn-tool', '--model', '/nowhere.gguf', '--optimizer', 'edit']);
    expect(edit.code).toBe(2);
    expect(edit.err).toContain('--optimizer edit needs a family with an edit menu; learn-tool has none');
    const split = await cli(['evolve', 'learn-design', '--model', '/nowhere.gguf', '--heldout', '4', '--heldout-split', 'test']);
    expect(split.code).toBe(2);
    expect(split.err).toContain('--heldout-split test: learn-design has no such split (splits: train, heldout)');
    // More held-out tasks than the split has: refused up front (it was cut to 500 after the whole loop).
    const over = await cli(['evolve', 'learn-design', '--model', '/nowhere.gguf', '--heldout', '9000']);
    expect(over.code).toBe(2);
    expect(over.err).toContain('--heldout 9000: learn-design/heldout has 500 tasks');

    const few = await cli(['evolve', 'learn-design', '--model', '/nowhere.gguf', '--offset', '1998', '--select-tasks', '4']);
    expect(few.code).toBe(2);
    expect(few.err).toContain('--limit 1 and --select-tasks 4 need 4 tasks of learn-design/train from offset 1998; it has 2');

    // A --design file that is not there names the flag (it was a raw ENOENT); the pair judge needs the family's own prompt.
    const design = await cli(['evolve', 'learn-design', '--model', '/nowhere.gguf', '--design', '/no/such/v0.json']);
    expect([design.code, design.err.split('\n')[0]]).toEqual([2, 'flowlab evolve: --design /no/such/v0.json: no such file (a version-0 design, JSON)']);
    const pair = await cli(['evolve', 'learn-tool', '--model', '/nowhere.gguf', '--judge', 'pair']);
    expect(pair.code).toBe(2);
    expect(pair.err).toContain("--judge pair reads the family's own pairwise prompt; learn-tool has none (learn-design and learn-unit have one)");

    // A model that is not there: refused, and the store this command would have created is not left behind; an existing one is kept.
    const dir = tempDir('evolve-nomodel');
    const gone = await cli(['evolve', 'learn-design', '--model', '/nowhere.gguf', '--db', path.join(dir, 'new.db')]);
    expect([gone.code, gone.err.split('\n')[0]]).toEqual([1, 'flowlab evolve: Model file not found: /nowhere.gguf [MODEL_NOT_FOUND]']);
    expect(readdirSync(dir)).toEqual([]);
    openStore(path.join(dir, 'old.db')).close();
    await cli(['evolve', 'learn-design', '--model', '/nowhere.gguf', '--db', path.join(dir, 'old.db')]);
    expect(readdirSync(dir)).toEqual(['old.db']);

    const missing = await cli(['evolve', '--timeline', 'nope', '--db', path.join(tempDir('evolve-args'), 'none.db')]);
    expect(missing.code).toBe(1);
  }, 60_000);
});

describe('flowlab evolve: another model than the stored evolution ran with', () => {
  it('names both files and suggests --id (it said MODEL_FILE_CHANGED, naming the new file as changed)', async () => {
    const dir = tempDir('evolve-other-model');
    const [a, b] = [path.join(dir, 'a.gguf'), path.join(dir, 'b.gguf')];
    writeFileSync(a, 'first model');
    writeFileSync(b, 'second model');
    const db = path.join(dir, 'lab.db');
    const store = openStore(db);
    store.createExperiment(newExperiment({ id: 'evo-x.t0.w0', kind: 'mass', config: { models: { models: { default: a }, roleModels: {}, gpu: false, fingerprints: { default: 'size:11' } } } }));
    store.close();
    const r = await cli(['evolve', 'learn-tool', '--model', b, '--id', 'evo-x', '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`evolution evo-x ran with ${a} as model "default", not ${b}: give that file to resume it, or start a new evolution with --id <new-id> [DIFFERENT_MODEL]`);
    expect(r.err).not.toContain('MODEL_FILE_CHANGED');
  }, 60_000);
});
