/**
 * MASS jobs through the lab API and host without a model (the SIMULATED model and trainer of
 * core/mass/rsi.fixture.ts): evolve, rank and rsi started from a request, their progress and
 * closing events, the records the CLI writes, cancel, BUSY on a held model file, a refused
 * payload naming its field, and other settings under a stored loop id refused before anything runs.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, isLabEvent, type MassJobEvent } from '../core/api/index.ts';
import { delayed, fakeTrainer, flight, scripted, type Flight } from '../core/mass/rsi.fixture.ts';
import { fakeModelFile, labHostOptions, labPerTest, rejectionOf } from '../test/fixtures.ts';
import { createLabHost } from './index.ts';

let model: string;
/** Calls in flight on the SIMULATED model (its replies delayed 0-11 ms by call). */
let f: Flight = flight();
const t = labPerTest('lab-mass', (h) => {
  model = fakeModelFile(h.dir);
  return createLabHost({
    ...labHostOptions(h), dataDir: path.join(h.dir, 'data'),
    createProvider: async (cfg) => delayed(scripted(cfg.models['default'] ?? ''), f),
    loadTrainer: async () => fakeTrainer([]),
  });
});

const mass = (id: string) => t.events.filter((e): e is MassJobEvent => (e.type === 'massJob' || e.type === 'massProgress') && e.jobId === id);
const closing = (id: string) => mass(id).filter((e) => e.type === 'massJob').map((e) => (e.type === 'massJob' ? e.status : ''));

describe('MASS jobs from the lab (SIMULATED model and trainer)', () => {
  it('starts an evolve with the CLI defaults, pushes its progress and stores the evolution', async () => {
    const { jobId } = await t.api.startEvolve({ dataset: 'learn-tool', model, iterations: 3 });
    expect(jobId).toBe('evo-learn-tool-1-baseline-tiny');
    await t.lab.runner.mass.settled(jobId);
    expect(closing(jobId)).toEqual(['running', 'completed']);
    const progress = mass(jobId).filter((e) => e.type === 'massProgress');
    expect(progress.length).toBeGreaterThan(2);
    expect(progress.every((e) => isLabEvent(e))).toBe(true);
    expect(progress.at(-1)).toMatchObject({ done: 3, total: 3 });
    expect(progress.map((e) => (e.type === 'massProgress' ? e.line : '')).join('\n')).toMatch(/task 0 it 0: baseline ran, external score/);
    expect(t.api.getEvolution({ evolutionId: jobId })).toMatchObject({ evolutionId: jobId, rule: 'baseline', iterations: 3 });
    // As `flowlab evolve`: a reproducibility record, finished with its digest, and the judge
    // audited on swapped pairs (EVOLVE_DEFAULTS.auditSwaps = 6; one task's 3 iterations judge at
    // most 3 pairs, so the sample is all of them).
    const record = t.store.repro.find(jobId);
    expect(record?.kind).toBe('evolution');
    expect(record?.outputDigest).toMatch(/^[0-9a-f]{16,}$/);
    expect(t.store.mass.get(jobId, 'evolution', 'settings')?.value).toMatchObject({ auditSwaps: 6 });
    const judged = t.store.mass.list(jobId, 'verdict').length;
    expect(judged).toBeGreaterThan(0);
    expect(t.store.mass.list(jobId, 'verdict-swap')).toHaveLength(Math.min(6, judged));
  }, 60_000);

  it('plans an evolve as `flowlab evolve` does (core/mass planEvolution): learn-design\'s selection set, judge, proposer and held-out options; bad combinations refused naming the field', async () => {
    const { jobId } = await t.api.startEvolve({ dataset: 'learn-design', model, iterations: 2, rule: 'direct', judge: 'verifier', proposer: 'random', heldout: 2 });
    // The CLI's default id and selection set: 4 training tasks for a family with an edit menu.
    expect(jobId).toBe('evo-learn-design-1-direct-tiny-verifier-random-sel4');
    await t.lab.runner.mass.settled(jobId);
    expect(closing(jobId)).toEqual(['running', 'completed']);
    const settings = t.store.mass.get(jobId, 'evolution', 'settings')?.value as { dataset: string; iterations: number; rule: string; selection: unknown[] };
    expect([settings.dataset, settings.iterations, settings.rule, settings.selection.length]).toEqual(['learn-design', 2, 'direct', 3]);
    const lines = mass(jobId).filter((e) => e.type === 'massProgress').map((e) => (e.type === 'massProgress' ? e.line : ''));
    expect(lines.join('\n')).toMatch(/selection task|on 4 training tasks/);
    const proposer = await rejectionOf(ApiError, t.api.startEvolve({ dataset: 'learn-tool', model, proposer: 'random', id: 'evo-x' }));
    expect(proposer).toMatchObject({ code: 'BAD_REQUEST', method: 'startEvolve', field: 'proposer' });
    expect(proposer.message).toBe("startEvolve: proposer random draws among the edit language's edits: it needs optimizer edit and a family with a menu (learn-design)");
    const split = await rejectionOf(ApiError, t.api.startEvolve({ dataset: 'learn-design', model, heldout: 4, heldoutSplit: 'test', id: 'evo-y' }));
    expect(split).toMatchObject({ code: 'BAD_REQUEST', field: 'heldoutSplit' });
    const extra = await rejectionOf(ApiError, t.api.startEvolve({ dataset: 'learn-design', model, selectTasks: 33 } as never));
    expect(extra).toMatchObject({ code: 'BAD_REQUEST', field: 'selectTasks' });
  }, 120_000);

  it('starts a rank (halted by the SIMULATED tamperer, recorded so) and an rsi cycle; refuses other settings under the loop id', async () => {
    const { jobId } = await t.api.startRank({ dataset: 'learn-tool', model, tasks: 1, runs: 4, topK: 2, simulateTamperer: 'expectation', loopId: 'lab-rank' });
    await t.lab.runner.mass.settled(jobId);
    expect(closing(jobId)).toEqual(['running', 'completed']);
    expect(t.api.getOuterLoop({ loopId: 'lab-rank' }).halted).toEqual({ cycle: null, reasons: ['2 of 4 runs quarantined (50.0%), above the threshold of 25.0%'] });
    const other = await rejectionOf(ApiError, t.api.startRank({ dataset: 'learn-tool', model, tasks: 2, runs: 4, topK: 2, loopId: 'lab-rank' }));
    expect(other).toMatchObject({ code: 'BAD_REQUEST', method: 'startRank', field: 'tamperer' });
    expect(other.message).toMatch(/loop lab-rank was started with other settings \(options\.tamperer, tasks\)/);

    const rsi = await t.api.startRsi({ dataset: 'learn-tool', model, tasks: 1, runs: 4, topK: 2, heldout: 2, cycles: 1, sftPasses: 1, loopId: 'lab-rsi' });
    await t.lab.runner.mass.settled(rsi.jobId);
    expect(closing('lab-rsi')).toEqual(['running', 'completed']);
    expect(t.api.getOuterLoop({ loopId: 'lab-rsi' }).cycles.map((c) => `${c.cycle}:${c.arm}`)).toEqual(['1:self', '1:verifier']);
  }, 60_000);

  it('a rank with parallel 4 keeps calls in flight and records the same loop as parallel 1', async () => {
    const view = async (loopId: string, parallel: number) => {
      f = flight();
      const { jobId } = await t.api.startRank({ dataset: 'learn-tool', model, tasks: 1, runs: 5, topK: 2, loopId, parallel });
      await t.lab.runner.mass.settled(jobId);
      expect(closing(jobId)).toEqual(['running', 'completed']);
      return { max: f.max, loop: JSON.stringify(t.api.getOuterLoop({ loopId })).split(loopId).join('<loop>') };
    };
    const one = await view('lab-p1', 1);
    const four = await view('lab-p4', 4);
    expect(one.max).toBe(1);
    expect(four.max).toBeGreaterThan(1);
    expect(four.loop).toBe(one.loop);
    expect(four.loop).toContain('<loop>-t0-r4/0');
  }, 60_000);

  it('cancels a running job, holds its model file meanwhile (BUSY), and names a bad field', async () => {
    const { jobId } = await t.api.startRank({ dataset: 'learn-tool', model, tasks: 4, runs: 18, loopId: 'long' });
    const busy = await rejectionOf(ApiError, t.api.startEvolve({ dataset: 'learn-tool', model }));
    expect(busy).toMatchObject({ code: 'BUSY', method: 'startEvolve' });
    expect(busy.message).toContain('is in use by MASS rank long');
    await expect(t.api.cancelMass({ jobId })).resolves.toEqual({ cancelled: true });
    expect(closing(jobId)).toEqual(['running', 'cancelled']);
    await expect(t.api.cancelMass({ jobId })).resolves.toEqual({ cancelled: false });
    const bad = await rejectionOf(ApiError, t.api.startRsi({ dataset: 'learn-tool', model, arms: [] }));
    expect(bad).toMatchObject({ code: 'BAD_REQUEST', field: 'arms' });
    const family = await rejectionOf(ApiError, t.api.startRank({ dataset: 'gsm8k', model }));
    expect(family).toMatchObject({ code: 'BAD_REQUEST', field: 'dataset' });
  }, 60_000);
});
