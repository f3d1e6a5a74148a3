/**
 * A train loop over a code dataset (HumanEval's format, graded by running its tests in the code
 * sandbox) stopped before its first iteration and resumed from the lab API (`resumeRun`): the
 * resumed loop must grade with the lab's sandbox and finish. The reported bug (issue 28): the
 * runner's resume path read datasets without the sandbox, so the resumed loop failed with
 * `NO_SANDBOX`. A scripted provider, a fake trainer and a counting sandbox stand in for the
 * model, TensorFlow.js and Pyodide.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StartTrainLoopRequest } from '../core/api/index.ts';
import { ScriptedProvider } from '../core/model/index.ts';
import type { CodeSandbox, SandboxRequest, SandboxResult } from '../core/sandbox/index.ts';
import type { TrainableModel, Trainer } from '../core/training/index.ts';
import { fakeModelFile, gate, labHostOptions, labPerTest, REPO_ROOT } from '../test/fixtures.ts';
import { createLabHost } from './index.ts';

const CODER = readFileSync(path.join(REPO_ROOT, 'examples/humaneval-single.yaml'), 'utf8');
/** Two tasks in HumanEval's JSONL format. */
const TASKS = [
  { task_id: 'HumanEval/0', prompt: 'def add(a, b):\n    """Sum."""\n', canonical_solution: '    return a + b\n', test: 'def check(candidate):\n    assert candidate(1, 2) == 3\n', entry_point: 'add' },
  { task_id: 'HumanEval/1', prompt: 'def neg(a):\n    """Negate."""\n', canonical_solution: '    return -a\n', test: 'def check(candidate):\n    assert candidate(1) == -1\n', entry_point: 'neg' },
];

/** A sandbox that records every program and answers `ok` (every test passed). */
class CountingSandbox implements CodeSandbox {
  readonly programs: string[] = [];
  async run(req: SandboxRequest): Promise<SandboxResult> {
    this.programs.push(req.code);
    return { status: 'ok', stdout: '', stderr: '', ms: 1 };
  }
  async close(): Promise<void> {}
}

let model: string;
let sandbox: CountingSandbox;
let load: () => Promise<TrainableModel>;
const trainer: Trainer = { load: () => load() };
const fakeModel = (): TrainableModel => ({ dispose: () => {} }) as unknown as TrainableModel;

const t = labPerTest('lab-code-resume', (h) => {
  model = fakeModelFile(h.dir);
  sandbox = new CountingSandbox();
  load = async () => fakeModel();
  const data = path.join(h.dir, 'data', 'humaneval');
  mkdirSync(data, { recursive: true });
  writeFileSync(path.join(data, 'HumanEval.jsonl'), TASKS.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return createLabHost({
    ...labHostOptions(h), dataDir: path.join(h.dir, 'data'), sandbox,
    createProvider: async () => new ScriptedProvider(async () => '```python\ndef add(a, b):\n    return a + b\n```'),
    loadTrainer: async () => trainer,
  });
});

const req: StartTrainLoopRequest = { workflowText: CODER, dataset: 'humaneval', split: 'test', models: {}, iterations: 1, group: 2, limit: 2, heldout: 0 };

describe('a train loop over a code dataset resumed from the lab API', () => {
  it('grades with the lab\'s sandbox and finishes (it failed with NO_SANDBOX before the fix)', async () => {
    // Stop the loop while its trainer loads: nothing ran, the loop is stored cancelled.
    const loading = gate();
    load = async () => {
      await loading.wait;
      return fakeModel();
    };
    const { loopId } = await t.api.startTrainLoop({ ...req, models: { default: model } });
    const cancelled = t.api.cancelTrainLoop({ loopId });
    loading.open();
    await expect(cancelled).resolves.toEqual({ cancelled: true });
    expect(t.store.trainLoops.get(loopId)).toMatchObject({ status: 'cancelled', done: 0, iterations: 1 });
    expect(sandbox.programs).toEqual([]);

    load = async () => fakeModel();
    await expect(t.api.resumeRun({ experimentId: loopId })).resolves.toEqual({ experimentId: loopId, pending: 1, loopId });
    await t.lab.runner.trainLoopSettled(loopId);
    const end = t.events.filter((e) => e.type === 'trainLoop').at(-1);
    expect(end).toEqual({ type: 'trainLoop', loopId, status: 'completed', roles: ['coder'], done: 1, iterations: 1 });
    // One iteration: 2 tasks x group 2 = 4 rollouts, each graded by running its program in the sandbox.
    expect(sandbox.programs).toHaveLength(4);
    expect(sandbox.programs[0]).toContain('check(add)');
    expect(t.store.trainLoops.get(loopId)).toMatchObject({ status: 'completed', done: 1 });
  });
});
