/** Reproducibility records: fingerprints, digests, comparisons and the task sample, on hand-built data. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { agentEvent, modelCall, nodeEvents, runRecord } from '../../test/fixtures.ts';
import { asNodeId } from '../ids.ts';
import type { ExperimentCall } from '../store/index.ts';
import { inputOrder } from '../training/samples.ts';
import { openStore } from '../store/index.ts';
import { buildFingerprint, compareRuns, finishEvolutionRecord, recordEvolution, compareVersions, fingerprintDifferences, repeatabilityOf, runsDigest, sampleTaskIndices, sha256Of, versionsDigest } from './index.ts';

const hex = (s: string) => createHash('sha256').update(s).digest('hex');

describe('fingerprints', () => {
  it('hash inputs (text as UTF-8, values as canonical JSON with sorted keys), keep plain values, and name the models by fingerprint', () => {
    const fp = buildFingerprint({
      kind: 'experiment',
      inputs: { workflow: 'name: w\n', config: { b: 1, a: [2] } },
      plain: { dataset: 'toy' },
      seed: 7,
      models: { models: { default: '/m/a.gguf', judge: 'openai:http://h:8080/v1#m' }, roleModels: {}, gpu: false, fingerprints: { default: '123:abc' }, threads: 1 },
    });
    expect(fp.inputs).toEqual({ workflow: hex('name: w\n'), config: hex('{"a":[2],"b":1}'), dataset: 'toy' });
    expect(fp.models).toEqual({ default: '123:abc', judge: 'endpoint' });
    expect(fp.decode).toMatchObject({ batching: 'isolated', threads: 1, prefixReuse: true, exactAttention: false });
    expect(fp.seed).toBe(7);
    expect(fp.repeatability).toBe('not guaranteed: server-side batching');
  });

  it('repeatability: exact for local isolated decoding, not guaranteed with mixed batches or a server', () => {
    const base = { models: { default: '/m/a.gguf' }, roleModels: {}, gpu: false as const };
    expect(repeatabilityOf(base)).toBe('exact');
    expect(repeatabilityOf({ ...base, batching: 'isolated' })).toBe('exact');
    expect(repeatabilityOf({ ...base, batching: 'mixed' })).toBe('not guaranteed: mixed decode batches');
    expect(repeatabilityOf({ ...base, models: { default: 'openai:http://h:8080/v1#m' } })).toBe('not guaranteed: server-side batching');
  });

  it('fingerprintDifferences names the fields that changed', () => {
    const a = buildFingerprint({ kind: 'experiment', inputs: { workflow: 'x' }, seed: 1, environment: { code: { flowlab: '0.1.0', commit: 'a' }, native: { node: '20' } } });
    const b = buildFingerprint({ kind: 'experiment', inputs: { workflow: 'x' }, seed: 1, environment: { code: { flowlab: '0.1.0', commit: 'b' }, native: { node: '22' } } });
    expect(fingerprintDifferences(a, a)).toEqual([]);
    expect(fingerprintDifferences(a, b)).toEqual(['code.commit', 'native.node']);
  });
});

describe('digests and sample order', () => {
  const call = (taskIndex: number, nodeId: string, callIndex: number, completion: string): ExperimentCall =>
    ({ ...modelCall({ callIndex, completion }), runId: `r${taskIndex}`, taskIndex, nodeId: asNodeId(nodeId), attempt: 1 }) as ExperimentCall;

  it('inputOrder sorts by task index, node id, attempt, call index — never by the order calls finished', () => {
    const finished = [call(1, 'b', 0, 'x'), call(0, 'b', 1, 'y'), call(1, 'a', 0, 'z'), call(0, 'b', 0, 'w'), call(0, 'a', 0, 'v')];
    expect(inputOrder(finished).map((c) => c.completion)).toEqual(['v', 'w', 'y', 'z', 'x']);
  });

  it('a digest does not depend on the order runs and calls are listed, nor on timings; it changes with one sampled character', () => {
    const runs = [runRecord('e', 0), runRecord('e', 1, { answer: '5', correct: false, score: 0 })];
    const calls = [call(0, 'a', 0, 'four'), call(1, 'a', 0, 'five')];
    const d = runsDigest(runs, calls);
    expect(runsDigest([...runs].reverse(), [...calls].reverse())).toBe(d);
    expect(runsDigest(runs.map((r) => ({ ...r, startedAt: 1, endedAt: 2 })), calls.map((c) => ({ ...c, ms: 99, startedAt: 5 })))).toBe(d);
    expect(runsDigest(runs, [calls[0]!, { ...calls[1]!, completion: 'fivE' }])).not.toBe(d);
  });

  it('versionsDigest is the sha256 of [role, iteration, sha256] rows sorted by role then iteration', () => {
    const v = [{ role: 'solver', iteration: 1, sha256: 's1' }, { role: 'planner', iteration: 2, sha256: 'p2' }, { role: 'planner', iteration: 1, sha256: 'p1' }];
    expect(versionsDigest(v)).toBe(hex('[["planner",1,"p1"],["planner",2,"p2"],["solver",1,"s1"]]'));
    expect(sha256Of('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'); // FIPS 180-2 test vector
  });
});

describe('comparisons', () => {
  it('compareVersions pairs by (role, iteration): 3 of 4 identical, the first difference in that order', () => {
    const a = [{ role: 'planner', iteration: 1, sha256: 'a' }, { role: 'planner', iteration: 2, sha256: 'b' }, { role: 'solver', iteration: 1, sha256: 'c' }, { role: 'solver', iteration: 2, sha256: 'd' }];
    const b = [a[0]!, a[1]!, { ...a[2]!, sha256: 'X' }, a[3]!];
    expect(compareVersions(a, a)).toEqual({ versions: 4, identical: 4 });
    expect(compareVersions(a, b)).toEqual({ versions: 4, identical: 3, first: { role: 'solver', iteration: 1, a: 'c', b: 'X' } });
    expect(compareVersions(a, a.slice(0, 3))).toEqual({ versions: 4, identical: 3, first: { role: 'solver', iteration: 2, a: 'd' } });
  });

  it("compareRuns pairs runs by task and names diff's first diverging node of the lowest differing task", () => {
    const runsA = [runRecord('e', 0), runRecord('e', 1), runRecord('e', 2)];
    const runsB = [runRecord('f', 0), runRecord('f', 1), runRecord('f', 2)];
    const evA = (id: string) => nodeEvents(runsA.find((r) => r.runId === id)!);
    const same = compareRuns({ runs: runsA, events: evA }, { runs: runsB, events: (id) => nodeEvents(runsB.find((r) => r.runId === id)!) });
    expect(same).toEqual({ tasks: 3, identical: 3 });
    // Task 1 and 2 of B sampled another plan: task 1 is named, at node plan, as a sampled-text difference.
    const evB = (id: string) => {
      const r = runsB.find((x) => x.runId === id)!;
      if (r.taskIndex === 0) return nodeEvents(r);
      return [agentEvent(r.runId, 'plan', 'planner', [modelCall({ completion: 'add two and three' })], { inputs: { question: '2+2?' }, output: 'add two and three', startedAt: 1, endedAt: 2 }), nodeEvents(r)[1]!];
    };
    const diff = compareRuns({ runs: runsA, events: evA }, { runs: runsB, events: evB });
    expect(diff.tasks).toBe(3);
    expect(diff.identical).toBe(1);
    expect(diff.first).toMatchObject({ taskIndex: 1, nodeId: 'plan', attempt: 1, a: 'add two and two', b: 'add two and three' });
    expect(diff.first!.what).toContain('sampled text');
    // Only task 0 compared: identical.
    expect(compareRuns({ runs: runsA, events: evA }, { runs: runsB, events: evB }, undefined, new Set([0]))).toEqual({ tasks: 1, identical: 1 });
  });
});

describe('sampleTaskIndices', () => {
  it('n distinct indices of the list, sorted, the same for the same seed; all of them when n is at least their count', () => {
    const xs = Array.from({ length: 20 }, (_, i) => i * 2);
    const s = sampleTaskIndices(xs, 5, 3);
    expect(s).toHaveLength(5);
    expect(new Set(s).size).toBe(5);
    expect(s.every((x) => xs.includes(x))).toBe(true);
    expect(s).toEqual([...s].sort((a, b) => a - b));
    expect(sampleTaskIndices(xs, 5, 3)).toEqual(s);
    expect(sampleTaskIndices([3, 1, 2], 5, 0)).toEqual([1, 2, 3]);
    expect(sampleTaskIndices(xs, 0, 1)).toEqual([]);
  });
});

describe('evolution records', () => {
  it('the digest of an evolution covers its records by kind and key, not the order they were written in', () => {
    const recs = [{ kind: 'step', key: 't0/v1', value: { score: 0.5 } }, { kind: 'evolution', key: 'settings', value: { dataset: 'learn-tool' } }, { kind: 'step', key: 't0/v0', value: { score: 0 } }];
    const digests = [recs, [...recs].reverse()].map((order) => {
      const s = openStore(':memory:');
      try {
        for (const r of order) s.mass.put({ evolutionId: 'evo-1', ...r });
        recordEvolution(s, 'evo-1', { tasks: [], firstDesign: {}, settings: { iterations: 1 }, seed: 0, models: { models: { default: '/m.gguf' }, roleModels: {}, gpu: false } });
        const d = finishEvolutionRecord(s, 'evo-1');
        expect(s.repro.find('evo-1')).toMatchObject({ kind: 'evolution', outputDigest: d });
        return d;
      } finally {
        s.close();
      }
    });
    expect(digests[0]).toBe(digests[1]);
    expect(digests[0]).toBe(sha256Of([['evolution', 'settings', { dataset: 'learn-tool' }], ['step', 't0/v0', { score: 0 }], ['step', 't0/v1', { score: 0.5 }]]));
  });
});
