import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBadRequest, newExperiment, runRecord } from '../../../test/fixtures.ts';
import { asNodeId, asRunId, HUMAN } from '../../ids.ts';
import { openStore, type Store } from '../../store/index.ts';
import { seedDesignedExperiment } from '../designedRun.fixture.ts';
import { ApiError, createHandlers, type FlowlabApi } from '../index.ts';
import { seedRunDiffPair, TEAM_YAML, VERDICTS } from '../runDiff.fixture.ts';

let store: Store;
let api: FlowlabApi;
let runs: { a: string; b: string };

beforeEach(async () => {
  store = openStore(':memory:');
  runs = await seedRunDiffPair(store);
  api = createHandlers({ store, version: 'test' });
});
afterEach(() => store.close());

describe('diffRuns over the real engine\'s runs of gsm8k-team (scripted, SIMULATED model)', () => {
  it('names the verifier\'s first verdict as the first divergence; the loop B took is present in B only', () => {
    const v = api.diffRuns(runs);
    expect([v.a.runId, v.b.runId, v.a.workflowName, v.sameWorkflow, v.sameWorkflowName, v.notes, v.greedy]).toEqual(['diff-accept/0', 'diff-revise/0', 'gsm8k-team', true, true, [], true]);
    const d = v.diff;
    expect(d.nodes.map((n) => `${n.nodeId}#${n.attempt}:${n.in}`)).toEqual([
      'plan#1:both', 'solve#1:both', 'calculate#1:both', 'verify#1:both', 'solve#2:b', 'answer#1:both', 'calculate#2:b', 'verify#2:b',
    ]);
    expect(d.first).toEqual({
      index: 3, nodeId: 'verify', attempt: 1, aspect: 'completion',
      difference: { aspect: 'completion', at: 'call 0 completion', a: VERDICTS.accept, b: VERDICTS.revise, offset: 12 },
    });
    expect(d.firstBehaviour).toEqual(d.first);
    expect(d.nodes[3]!.differences.map((x) => x.at)).toEqual(['call 0 completion', 'output']);
    expect(d.counts).toEqual({ nodes: 8, differing: 4, onlyA: 0, onlyB: 3 });
    // Both answered 4 after all: the answer node read the same values.
    expect([v.a.answer, v.b.answer, d.nodes[5]!.differences]).toEqual(['4', '4', []]);
  });

  it('a run diffed with itself is the same at every node', () => {
    const d = api.diffRuns({ a: runs.b, b: runs.b }).diff;
    expect([d.same, d.first, d.counts.nodes, d.counts.differing]).toEqual([true, undefined, 8, 0]);
  });

  it('two designed runs (different designs of different tasks): the design node diverges first, in its prompt (it reads the task there)', async () => {
    const exp = await seedDesignedExperiment(store);
    const [r0, r1] = store.listRuns(exp);
    const v = api.diffRuns({ a: r0!.runId, b: r1!.runId });
    expect(v.diff.first).toMatchObject({ nodeId: 'design', attempt: 1, aspect: 'prompt', difference: { at: 'call 0 prompt' } });
    expect(v.diff.first!.difference.a).toContain('#0');
    expect(v.diff.first!.difference.b).toContain('#1');
    // The designed node b failed (dangling input) in run 0 and ran in run 1.
    const b = v.diff.nodes.find((n) => n.nodeId === 'b')!;
    expect([b.a?.status, b.b?.status]).toEqual(['failed', 'ok']);
  });

  it('runs of differently named workflows are diffed with a note', () => {
    const other = store.createExperiment(newExperiment({ id: 'demo-exp', limit: 1 }));
    const run = runRecord(other.id, 0, { runId: asRunId('demo-exp/0') });
    store.saveRun(run, [{ runId: run.runId, nodeId: asNodeId('plan'), attempt: 1, seq: 0, kind: 'tool', wiredBy: HUMAN, inputs: {}, output: 1, status: 'ok', calls: [], startedAt: 0, endedAt: 1 }]);
    const v = api.diffRuns({ a: runs.a, b: 'demo-exp/0' });
    expect([v.sameWorkflow, v.sameWorkflowName, v.b.workflowName]).toEqual([false, false, 'demo']);
    expect(v.notes[0]).toBe('The runs ran different workflows ("gsm8k-team" and "demo"): nodes are aligned by id only.');
    expect(TEAM_YAML).toContain('name: gsm8k-team');
  });

  it('unknown runs are NOT_FOUND; bad payloads BAD_REQUEST naming the field', () => {
    const err = (() => {
      try {
        api.diffRuns({ a: runs.a, b: 'nope/0' });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ApiError);
    expect([(err as ApiError).code, (err as ApiError).message]).toEqual(['NOT_FOUND', 'diffRuns: :memory:: no run nope/0']);
    expectBadRequest(() => api.diffRuns({ a: runs.a } as never), 'diffRuns', 'b', /payload field "b": missing/);
    expectBadRequest(() => api.diffRuns({ a: runs.a, b: 7 } as never), 'diffRuns', 'b', /expected string, received number/);
    expectBadRequest(() => api.diffRuns({ a: runs.a, b: runs.b, c: 1 } as never), 'diffRuns', 'c', /unknown field\(s\) "c"/);
  });
});
