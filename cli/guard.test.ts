/**
 * The process-level guard: a rejection nobody awaits (node-llama-cpp's sampler on a NaN model
 * used to raise one) records the experiments of the process as `interrupted` and ends it with
 * status 1 and one line, instead of Node's stack dump and an experiment left `running`.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { capture, newExperiment, scratchDir, storeTracker } from '../test/fixtures.ts';
import { recordFault } from './guard.ts';

const dir = scratchDir('guard');
const stores = storeTracker();
afterEach(stores.closeAll);

const SAMPLER = 'Failed to accept token in sampler: Unexpected empty grammar stack after accepting piece: <unk> (0)';

describe('recordFault', () => {
  it('marks only this process\'s running experiments interrupted and names them', async () => {
    const store = stores.open(path.join(dir(), 'a.db'));
    const mine = store.createExperiment(newExperiment());
    const done = store.createExperiment(newExperiment());
    store.finishExperiment(done.id, 'completed');
    const io = capture();
    const ids = await recordFault(new Error(SAMPLER), 'run', io, 'exit');
    expect(ids).toEqual([mine.id]);
    expect(store.getExperiment(mine.id).status).toBe('interrupted');
    expect(store.getExperiment(done.id).status).toBe('completed');
    expect(io.err).toBe(
      `flowlab run: internal failure (the process ends): ${SAMPLER}\n` +
        `Recorded as interrupted: ${mine.id}; \`flowlab resume <experiment-id>\` finishes the tasks left.\n`,
    );
  });

  it('in serve mode logs and leaves experiments running', async () => {
    const store = stores.open(path.join(dir(), 'b.db'));
    const exp = store.createExperiment(newExperiment());
    const io = capture();
    expect(await recordFault(Object.assign(new Error('boom'), { code: 'X_FAULT' }), 'serve', io, 'continue')).toEqual([]);
    expect(store.getExperiment(exp.id).status).toBe('running');
    expect(io.err).toBe('flowlab serve: internal failure (the server goes on): boom [X_FAULT]\n');
  });
});

describe('installProcessGuards in a real process', () => {
  it('an unhandled rejection ends the process with status 1 and the experiment interrupted', async () => {
    const db = path.join(dir(), 'proc.db');
    const script = path.join(dir(), 'fault.mts');
    const url = (p: string) => pathToFileURL(path.resolve(p)).href;
    writeFileSync(
      script,
      `import { installProcessGuards } from ${JSON.stringify(url('cli/guard.ts'))};
import { openStore } from ${JSON.stringify(url('core/store/index.ts'))};
const store = openStore(process.argv[2]);
const e = store.createExperiment({ kind: 'run', workflowName: 'w', workflowYaml: 'name: w', workflowHash: 'h', dataset: 'gsm8k', split: 'test', limit: 1, seed: 0, tasks: [] });
process.stdout.write(e.id);
installProcessGuards('run', { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s), isTTY: false });
void Promise.reject(new Error(${JSON.stringify(SAMPLER)}));
setTimeout(() => process.stdout.write(' still alive'), 10000);
`,
    );
    const { code, out, err } = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx/esm', script, db], { stdio: ['ignore', 'pipe', 'pipe'] });
      let o = '';
      let e = '';
      child.stdout.on('data', (d) => (o += d));
      child.stderr.on('data', (d) => (e += d));
      child.on('close', (c) => resolve({ code: c, out: o, err: e }));
    });
    expect(code).toBe(1);
    expect(out).toMatch(/^exp-\S+$/);
    expect(err).toContain(`flowlab run: internal failure (the process ends): ${SAMPLER}`);
    expect(err).toContain(`Recorded as interrupted: ${out}`);
    const store = stores.open(db, { mustExist: true });
    expect(store.getExperiment(out).status).toBe('interrupted');
  });
});

