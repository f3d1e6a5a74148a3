/**
 * The conformance sample (test/oracle/conformance.ts; `npm run conformance` runs the full
 * datasets): every example workflow × every dataset it can run on, the first 2 tasks of each,
 * against the oracle and the messy test models (SIMULATED, test/oracle/server.ts). The oracle
 * must score 100% with no failed node; the messy model must never score a run wrong silently (no
 * failed node and no flagged output) nor fail it with a root failure no role carries. Needs the
 * shared datasets; HumanEval and MBPP are graded in the Pyodide sandbox.
 */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { PyodideSandbox } from '../models/sandbox/index.ts';
import { noteSkip, sharedPath } from './fixtures.ts';
import { exampleFiles, formatConformance, runConformance, type ConformanceRow } from './oracle/conformance.ts';

const haveData = ['gsm8k', 'multihop_qa', 'humaneval', 'mbpp'].every((d) => existsSync(sharedPath('data', d)));
if (!haveData) noteSkip('conformance', 'the conformance sample', sharedPath('data'));

describe.skipIf(!haveData)('conformance: every example × dataset against the oracle and the messy model', () => {
  const sandbox = new PyodideSandbox();
  afterAll(() => sandbox.close());
  let rows: ConformanceRow[] = [];

  it('runs the sample: the oracle scores 100% with no failed node; the messy model is right, repaired or a typed, blamed failure — never silently wrong', async () => {
    rows = await runConformance({ limit: 2, sandbox });
    process.stdout.write(formatConformance(rows));
    const oracle = rows.filter((r) => r.style === 'oracle');
    expect(oracle.length).toBeGreaterThan(30);
    for (const r of oracle) {
      expect([r.example, r.dataset, r.accuracy, r.failures, r.silent]).toEqual([r.example, r.dataset, 1, {}, 0]);
    }
    for (const r of rows.filter((x) => x.style === 'messy')) expect([r.example, r.dataset, r.silent, r.unblamed]).toEqual([r.example, r.dataset, 0, 0]);
  }, 600_000);

  it('covers what the issue names: agentflow on the five multi-hop sets, DataWright with each strategy, code graded on the answer after a draft in the thinking, every example', () => {
    const has = (example: string, dataset: string, style: 'oracle' | 'messy') => rows.find((r) => r.example === example && r.dataset === dataset && r.style === style);
    for (const set of ['bamboogle', 'bamtwoogle', 'hotpotqa', 'musique', '2wikimultihopqa']) expect(has('agentflow.yaml', set, 'oracle')?.accuracy, set).toBe(1);
    for (const dw of ['datawright:shared:2:hotpotqa', 'datawright:paired:3:gsm8k', 'datawright:decoy:4:bamboogle']) expect(has('agentflow.yaml', dw, 'oracle')?.accuracy, dw).toBe(1);
    // The messy model's code replies hold a wrong draft block inside <think>: graded on the answer after it.
    expect([has('humaneval-single.yaml', 'humaneval', 'messy')?.accuracy, has('mbpp-single.yaml', 'mbpp', 'messy')?.accuracy]).toEqual([1, 1]);
    // Its fenced or embedded JSON is repaired: agentflow's structured nodes all through.
    expect(has('agentflow.yaml', 'musique', 'messy')).toMatchObject({ accuracy: 1, repaired: 8 });
    const covered = new Set(rows.map((r) => `examples/${r.example}`));
    expect(exampleFiles().filter((f) => !covered.has(f))).toEqual([]);
  });
});
