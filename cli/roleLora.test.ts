import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { computeWorkflowHash, openStore } from '../core/store/index.ts';
import { getDataset } from '../core/tasks/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';
import { makeLoraAdapter, readLoraBase, writeGguf } from '../models/gguf/index.ts';
import { cli, haveShared, shared, tinyModel } from '../test/cli.ts';
import { UsageError } from './args.ts';
import { checkLoraFingerprints, withFingerprints } from '../models/resolve.ts';
import { parseRoleLoras } from './args.ts';
import { resolveModels } from './models.ts';

const TEAM = readFileSync('examples/gsm8k-team.yaml', 'utf8');
const { graph } = parseWorkflow(TEAM, { tools: defaultTools() });
const tmp = () => mkdtempSync(path.join(tmpdir(), 'flowlab-role-lora-'));

describe('--role-lora parsing and model resolution', () => {
  it('role=adapter.gguf[@scale], repeatable per role; a trailing @number is the scale, any other @ is the path', () => {
    expect(parseRoleLoras(['solver=a.gguf', 'solver=b.gguf@0.5', 'planner=x@home/c.gguf', 'verifier=d.gguf@-1e-1'], 'u')).toEqual({
      solver: [{ path: path.resolve('a.gguf') }, { path: path.resolve('b.gguf'), scale: 0.5 }],
      planner: [{ path: path.resolve('x@home/c.gguf') }],
      verifier: [{ path: path.resolve('d.gguf'), scale: -0.1 }],
    });
    for (const bad of ['solver', '=a.gguf', 'solver=', 'solver=@2']) expect(() => parseRoleLoras([bad], 'u'), bad).toThrow(UsageError);
  });

  it('gives the role its own ref role:<name> on the file it would use anyway; other roles are unchanged', () => {
    const cfg = resolveModels(graph, { model: 'base.gguf', roleModel: {}, roleLora: ['solver=s.gguf@0.5'] }, 'u');
    expect(cfg.models).toEqual({ default: path.resolve('base.gguf'), 'role:solver': path.resolve('base.gguf') });
    expect(cfg.roleModels).toEqual({ planner: 'default', solver: 'role:solver', verifier: 'default', answerer: 'default' });
    expect(cfg.loras).toEqual({ 'role:solver': [{ path: path.resolve('s.gguf'), scale: 0.5 }] });
    // with --role-model: the adapter goes on that role's own file
    const both = resolveModels(graph, { model: 'base.gguf', roleModel: { solver: 'other.gguf' }, roleLora: ['solver=s.gguf'] }, 'u');
    expect(both.models['role:solver']).toBe(path.resolve('other.gguf'));
    expect(both.loras).toEqual({ 'role:solver': [{ path: path.resolve('s.gguf') }] });
    // no adapters: no loras key at all (configs stored before this feature look the same)
    expect(resolveModels(graph, { model: 'base.gguf', roleModel: {} }, 'u')).not.toHaveProperty('loras');
    expect(() => resolveModels(graph, { model: 'b.gguf', roleModel: {}, roleLora: ['ghost=s.gguf'] }, 'u')).toThrow(/--role-lora names role "ghost"/);
  });

  it('fingerprints adapters; resuming refuses a changed or missing adapter', () => {
    const dir = tmp();
    const adapter = path.join(dir, 'a.gguf');
    writeFileSync(adapter, 'one');
    const cfg = withFingerprints(resolveModels(graph, { model: tinyModel, roleModel: {}, roleLora: [`solver=${adapter}`] }, 'u'));
    expect(Object.keys(cfg.loraFingerprints!)).toEqual([adapter]);
    expect(() => checkLoraFingerprints(cfg)).not.toThrow();
    writeFileSync(adapter, 'two');
    expect(() => checkLoraFingerprints(cfg)).toThrow(`LoRA adapter of "role:solver" changed since the experiment started: ${adapter}`);
    expect(() => checkLoraFingerprints({ ...cfg, loras: { 'role:solver': [{ path: path.join(dir, 'gone.gguf') }] } })).toThrow(/not found: .*gone\.gguf/);
  });
});

describe.skipIf(!haveShared)('flowlab run / resume with --role-lora (tiny model)', () => {
  let dir: string;
  let zero: string;
  beforeAll(async () => {
    dir = tmp();
    zero = path.join(dir, 'zero.gguf');
    await writeGguf(zero, makeLoraAdapter(await readLoraBase(tinyModel), { rank: 4 }));
  });

  it('bad adapters stop the run before anything is recorded, naming the file', async () => {
    const db = path.join(dir, 'bad.db');
    const missing = path.join(dir, 'missing.gguf');
    let r = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '1', '--model', tinyModel, '--role-lora', `solver=${missing}`, '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`LoRA adapter file not found: ${missing}`);
    r = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '1', '--model', tinyModel, '--role-lora', `solver=${tinyModel}`, '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`Not a LoRA adapter: ${tinyModel}`);
    r = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '1', '--model', tinyModel, '--role-lora', 'ghost=x.gguf', '--db', db]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--role-lora names role "ghost"');
    if (existsSync(db)) {
      const store = openStore(db);
      expect(store.listExperiments()).toHaveLength(0);
      store.close();
    }
  });

  it('resume rebuilds the adapted role from the stored config, and refuses a changed adapter', async () => {
    const db = path.join(dir, 'resume.db');
    const tasks = getDataset('gsm8k', { dataDir: path.join(shared, 'data') }).load({ split: 'test', limit: 2, offset: 0 });
    const create = (adapter: string) => {
      const store = openStore(db);
      try {
        // as `flowlab run` records it, left with both tasks pending (as after a crash)
        const models = withFingerprints(resolveModels(graph, { model: tinyModel, roleModel: {}, roleLora: [`solver=${adapter}`] }, 'u'));
        return store.createExperiment({
          kind: 'run', workflowName: graph.name, workflowYaml: TEAM, workflowHash: computeWorkflowHash(TEAM), dataset: 'gsm8k', split: 'test', limit: 2, seed: 0,
          config: { workflowFile: path.resolve('examples/gsm8k-team.yaml'), offset: 0, dataDir: path.join(shared, 'data'), models },
          tasks: tasks.map((t) => ({ taskIndex: t.index, taskId: t.id, input: t.input, expected: t.expected })),
        }).id;
      } finally {
        store.close();
      }
    };
    const id = create(zero);
    const r = await cli(['resume', id, '--db', db, '--force', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ runs: 2, status: 'completed' });
    const store = openStore(db);
    const runs = store.listRuns(id);
    const refs = runs.flatMap((run) => store.getRunEvents(run.runId).flatMap((e) => e.calls.map((c) => [c.role, c.modelRef])));
    store.close();
    expect(refs).toContainEqual(['solver', 'role:solver']);
    expect(refs).toContainEqual(['planner', 'default']);
    expect(refs.filter(([role]) => role === 'solver').every(([, ref]) => ref === 'role:solver')).toBe(true);

    const changing = path.join(dir, 'changing.gguf');
    await writeGguf(changing, makeLoraAdapter(await readLoraBase(tinyModel), { rank: 4 }));
    const id2 = create(changing);
    await writeGguf(changing, makeLoraAdapter(await readLoraBase(tinyModel), { rank: 4, init: 'random' }));
    const refused = await cli(['resume', id2, '--db', db, '--force']);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`LoRA adapter of "role:solver" changed since the experiment started: ${changing}`);
  });
});
