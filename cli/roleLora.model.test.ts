import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { computeWorkflowHash, openStore } from '../core/store/index.ts';
import { getDataset } from '../core/tasks/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';
import { makeLoraAdapter, readLoraBase, writeGguf } from '../models/gguf/index.ts';
import { cli } from '../test/cli.ts';
import { haveShared, shared, tempDir, tinyModel } from '../test/fixtures.ts';
import { withFingerprints } from '../models/resolve.ts';
import { resolveModels } from './models.ts';

const TEAM = readFileSync('examples/gsm8k-team.yaml', 'utf8');
const { graph } = parseWorkflow(TEAM, { tools: defaultTools() });
const tmp = () => tempDir('role-lora');

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
