/**
 * The lab API lowers `threads` above the machine's cores to them and says so in the
 * experiment's `running` event (the CLI prints the same note; test/hardening/flags.test.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../../core/model/index.ts';
import { createLabHost } from '../../host/index.ts';
import { clampThreads } from '../../models/resolve.ts';
import { labPerTest, writeGsm8kTasks } from '../fixtures.ts';

const SINGLE = 'name: one\nroles:\n  solver: { kind: executor, instructions: Solve. }\nsteps:\n  - id: solve\n    role: solver\n    prompt: "Q: {{task.question}}"\n    output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } }\nanswer: solve.answer\n';
const cores = Math.max(1, availableParallelism());

const t = labPerTest('threads', (h) => {
  writeGsm8kTasks(path.join(h.dir, 'data'));
  mkdirSync(path.join(h.dir, 'models'));
  writeFileSync(path.join(h.dir, 'models/tiny.gguf'), 'GGUF');
  return createLabHost({
    store: h.store, dbFile: path.join(h.dir, 'lab.db'), modelDir: path.join(h.dir, 'models'), examplesDir: h.dir, dataDir: path.join(h.dir, 'data'),
    emit: (e) => h.events.push(e), createProvider: async () => new ScriptedProvider(() => '{"answer": 4}'), checkModel: async () => {},
  });
});

describe('threads', () => {
  it('clampThreads', () => {
    expect(clampThreads(2, 2)).toEqual({ threads: 2 });
    expect(clampThreads(100000, 2)).toEqual({ threads: 2, note: "threads 100000 is more than this machine's 2 CPU cores: using 2" });
    expect(clampThreads(3, 1)).toEqual({ threads: 1, note: "threads 3 is more than this machine's 1 CPU core: using 1" });
  });

  it.skipIf(cores >= 256)('startRun threads 256: recorded as the cores, said in the running event', async () => {
    const { experimentId } = await t.api.startRun({ workflowText: SINGLE, dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, threads: 256, models: { default: path.join(t.dir, 'models/tiny.gguf') } });
    await t.lab.runner.settled(experimentId);
    expect(t.api.getExperiment({ id: experimentId }).config?.models?.threads).toBe(cores);
    const running = t.events.find((e) => e.type === 'experiment' && e.status === 'running');
    expect(running).toMatchObject({ message: `threads 256 is more than this machine's ${cores} CPU core${cores === 1 ? '' : 's'}: using ${cores}` });
  });
});
