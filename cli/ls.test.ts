import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { asNodeId, asRoleName } from '../core/ids.ts';
import { computeWorkflowHash, openStore } from '../core/store/index.ts';
import { agentEvent, capture, laddersOf, modelCall, newExperiment, runRecord, tempDir } from '../test/fixtures.ts';
import { main } from './main.ts';

/** A database with experiment `exp-a` (3 runs: correct; wrong and failed, solver blamed, "banana" completion; wrong, "apple"). */
function seeded(): string {
  const db = path.join(tempDir('cli-ls'), 'lab.db');
  const store = openStore(db);
  const yaml = readFileSync('examples/gsm8k-single.yaml', 'utf8');
  store.createExperiment(newExperiment({ id: 'exp-a', workflowName: 'gsm8k-team', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml), config: { models: { models: { default: '/x/qwen.gguf' } } } }));
  const credit = { roots: [{ nodeId: asNodeId('solve'), failureClass: 'execution' as const, blamed: asRoleName('solver') }], cascades: [], byRole: {}, ambiguous: [], infrastructure: [], silent: false };
  const runs = [
    runRecord('exp-a', 0, { startedAt: 1_800_000_000_000, endedAt: 1_800_000_000_250 }),
    runRecord('exp-a', 1, { correct: false, score: 0, status: 'failed', failures: { execution: 1 }, credit, startedAt: 1_800_000_001_000, endedAt: 1_800_000_001_400, ladder: laddersOf({ solver: 0.25 }, { completion: 0 }) }),
    runRecord('exp-a', 2, { correct: false, score: 0, startedAt: 1_800_000_002_000, endedAt: 1_800_000_002_010 }),
  ];
  const words = ['seven', 'banana split', 'apple'];
  runs.forEach((r, i) => store.saveRun(r, [agentEvent(r.runId, 'solve', 'solver', [modelCall({ completion: words[i]! })])]));
  store.finishExperiment('exp-a', 'completed');
  store.close();
  return db;
}

/** Printed text with the table borders as spaces, so columns read as `a\s+b`. */
const flat = (s: string) => s.replace(/[│┌┐└┘├┤┬┴┼─]/g, ' ');

describe('flowlab ls', () => {
  it('lists experiments, then one experiment\'s runs with filters and search', async () => {
    const db = seeded();
    let io = capture();
    expect(await main(['ls', '--db', db], io)).toBe(0);
    expect(flat(io.out)).toMatch(/exp-a\s+run\s+gsm8k-team\s+gsm8k\/test\s+qwen\.gguf\s+completed\s+3\/3\s+33\.3%/);
    io = capture();
    expect(await main(['ls', 'exp-a', '--blamed', 'solver', '--search', 'banana', '--in', 'completion', '--db', db], io)).toBe(0);
    expect(flat(io.out)).toMatch(/1\s+exp-a-r1\s+failed\s+wrong\s+4\s+execution 1\s+solver\s+-\s+39\s+400/);
    expect(io.out).toContain('1 of 1 runs of exp-a');
    io = capture();
    expect(await main(['ls', '--wrong', '--json', '--sort', 'task', '--db', db], io)).toBe(0);
    const json = JSON.parse(io.out) as { total: number; rows: Array<{ runId: string; blamed: string[] }> };
    expect(json.total).toBe(2);
    expect(json.rows.map((r) => [r.runId, r.blamed])).toEqual([['exp-a-r1', ['solver']], ['exp-a-r2', []]]);
    io = capture();
    expect(await main(['ls', '--search', 'apple', '--json', '--db', db], io)).toBe(0);
    expect((JSON.parse(io.out) as { rows: Array<{ runId: string }> }).rows.map((r) => r.runId)).toEqual(['exp-a-r2']);
    io = capture();
    expect(await main(['ls', '--since', '2027-01-15', '--until', '2027-01-16', '--runs', '--json', '--db', db], io)).toBe(0);
    expect((JSON.parse(io.out) as { total: number }).total).toBe(3); // 1.8e12 ms is 2027-01-15T08:00Z
  });

  it('refuses bad filters with the usage (exit 2) and an unknown experiment (exit 1)', async () => {
    const db = seeded();
    let io = capture();
    expect(await main(['ls', '--correct', '--wrong', '--db', db], io)).toBe(2);
    expect(io.err).toContain('--correct and --wrong exclude each other');
    io = capture();
    expect(await main(['ls', '--since', 'yesterday', '--db', db], io)).toBe(2);
    expect(io.err).toContain('--since must be a date like 2026-12-03');
    io = capture();
    expect(await main(['ls', '--failure', 'bogus', '--db', db], io)).toBe(2);
    io = capture();
    expect(await main(['ls', '--search', '!!', '--db', db], io)).toBe(1);
    expect(io.err).toMatch(/no word to find.*\[BAD_QUERY\]/);
    io = capture();
    expect(await main(['ls', 'exp-nope', '--db', db], io)).toBe(1);
    expect(io.err).toMatch(/exp-nope.*\[NOT_FOUND\]/);
  });
});

describe('flowlab show', () => {
  it('prints an experiment\'s summary for an experiment id (it said NOT_FOUND)', async () => {
    const db = seeded();
    const io = capture();
    expect(await main(['show', 'exp-a', '--db', db], io)).toBe(0);
    expect(io.out).toContain('Experiment exp-a  run  workflow gsm8k-team  dataset gsm8k/test  seed 7');
    expect(flat(io.out)).toMatch(/runs stored\s+3 \/ 3 planned/);
    expect(flat(io.out)).toMatch(/accuracy\s+33\.3%/);
    expect(flat(io.out)).toMatch(/failures: execution\s+1/);
  });

  it('prints the ladder\'s completion rung with two decimals like the others (it printed 0 beside 0.00)', async () => {
    const db = seeded();
    const io = capture();
    expect(await main(['show', 'exp-a-r1', '--db', db], io)).toBe(0);
    const row = flat(io.out).split('\n').find((l) => /^\s*solver\s/.test(l))!;
    expect(row).toMatch(/solver\s+1\.00\s+1\.00\s+0\.00\s+0\.00\s+0\.00\s+0\.250/);
  });
});

describe('the data folder (the lab wrote flowlab.db and its folders into the current folder)', () => {
  it('--data <dir> holds the default database, and --help names the data folder', async () => {
    const saved = process.env.FLOWLAB_DATA;
    const savedDb = process.env.FLOWLAB_DB;
    delete process.env.FLOWLAB_DB;
    try {
      const dir = tempDir('cli-data');
      const store = openStore(path.join(dir, 'flowlab.db'));
      store.createExperiment(newExperiment({ id: 'exp-in-data' }));
      store.close();
      let io = capture();
      expect(await main(['ls', '--data', dir, '--json'], io)).toBe(0);
      expect((JSON.parse(io.out) as { rows: Array<{ id: string }> }).rows.map((r) => r.id)).toEqual(['exp-in-data']);
      io = capture();
      expect(await main(['ls', '--help'], io)).toBe(0);
      const help = io.out.replace(/\s+/g, ' ');
      expect(help).toContain('by default flowlab.db in the data folder (--data <dir>, $FLOWLAB_DATA)');
      expect(help).toContain(`(default: "${path.join(dir, 'flowlab.db')}")`);
      io = capture();
      expect(await main(['--data'], io)).toBe(2);
      expect(io.err).toContain('--data needs a folder');
    } finally {
      if (saved === undefined) delete process.env.FLOWLAB_DATA;
      else process.env.FLOWLAB_DATA = saved;
      if (savedDb !== undefined) process.env.FLOWLAB_DB = savedDb;
    }
  });
});
