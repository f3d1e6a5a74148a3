import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { ApiError, type MassJobEvent } from '../../core/api/index.ts';
import type { LabState } from '../state.ts';
import { massFamilyNames } from '../../core/mass/family.ts';
import { MASS_DATASETS, MASS_FORM_DEFAULTS, massStartOf, MassStartPanel, withJob } from './MassStartPanel.tsx';
import { closeViewStores, renderView, scriptedLab } from './viewTest.fixture.tsx';

afterEach(closeViewStores);

const render = (l: StoreApi<LabState>): string => renderView(l, <MassStartPanel />);

const ev = (e: Omit<MassJobEvent, 'job' | 'jobId'> & Partial<MassJobEvent>): MassJobEvent => ({ job: 'evolve', jobId: 'evo-1', ...e }) as MassJobEvent;

describe('MASS start form and job progress', () => {
  it('maps the form onto the three requests (threads 1)', () => {
    const f = { ...MASS_FORM_DEFAULTS, model: '/m/tiny.gguf' };
    expect(massStartOf(f)).toEqual({ job: 'evolve', request: { dataset: 'learn-tool', model: '/m/tiny.gguf', limit: 1, iterations: 11, threads: 1 } });
    expect(massStartOf({ ...f, job: 'rank', tasks: 2, runs: 6, tamperer: 'expectation', id: ' rk ' })).toEqual({ job: 'rank', request: { dataset: 'learn-tool', model: '/m/tiny.gguf', tasks: 2, runs: 6, threads: 1, simulateTamperer: 'expectation', loopId: 'rk' } });
    expect(massStartOf({ ...f, job: 'rsi', cycles: 3, heldout: 8 })).toMatchObject({ job: 'rsi', request: { runs: 18, cycles: 3, heldout: 8 } });
    // evolve's judge, proposer, selection set and held-out comparison, sent only when not the CLI's default.
    expect(massStartOf({ ...f, dataset: 'learn-design', judge: 'verifier', proposer: 'random', selectTasks: 16, evolveHeldout: 48 })).toEqual({
      job: 'evolve', request: { dataset: 'learn-design', model: '/m/tiny.gguf', limit: 1, iterations: 11, threads: 1, judge: 'verifier', proposer: 'random', selectTasks: 16, heldout: 48 },
    });
  });

  it('offers every MASS family the lab can run (core/mass massFamilyNames)', () => {
    expect([...MASS_DATASETS].sort()).toEqual(massFamilyNames().sort());
  });

  it('takes each job\'s CLI default task count (evolve --limit 1, rank/rsi --tasks 4) unless the user changed it', () => {
    const f = { ...MASS_FORM_DEFAULTS, model: '/m/tiny.gguf' };
    expect(massStartOf(withJob(f, 'rank'))).toMatchObject({ job: 'rank', request: { tasks: 4 } });
    expect(massStartOf(withJob(withJob(f, 'rsi'), 'evolve'))).toMatchObject({ job: 'evolve', request: { limit: 1 } });
    expect(massStartOf(withJob({ ...f, tasks: 2 }, 'rsi'))).toMatchObject({ job: 'rsi', request: { tasks: 2 } });
  });

  it('folds the events (those sent before the start answered too), shows progress, and loads the lists when the job ends', async () => {
    let requested: unknown;
    const l = scriptedLab((self) => ({
      startEvolve: async (req) => {
        requested = req;
        // The host sends `running` and a first line before it answers.
        self.getState().receiveMass(ev({ type: 'massJob', status: 'running' }));
        self.getState().receiveMass(ev({ type: 'massProgress', line: 'task 0 it 0: baseline ran, external score 0.00', done: 0, total: 2 }));
        return { jobId: 'evo-1' };
      },
      cancelMass: async () => ({ cancelled: true }),
    }));
    await l.getState().loadModels();
    await l.getState().startMassJob({ job: 'evolve', request: { dataset: 'learn-tool', model: '/m/tiny.gguf', iterations: 2, threads: 1 } });
    expect(requested).toEqual({ dataset: 'learn-tool', model: '/m/tiny.gguf', iterations: 2, threads: 1 });
    expect(l.getState().massJob).toMatchObject({ jobId: 'evo-1', status: 'running', done: 0, total: 2, lines: ['task 0 it 0: baseline ran, external score 0.00'] });
    l.getState().receiveMass(ev({ type: 'massProgress', line: 'task 0 it 1: v1 ran', done: 1, total: 2 }));
    l.getState().receiveMass(ev({ type: 'massProgress', jobId: 'other', line: 'not ours' }));
    let html = render(l);
    expect(html).toContain('data-testid="mass-job-status">running</span>');
    expect(html).toContain('data-testid="mass-job-count">1 / 2</span>');
    expect(html).toContain('<li>task 0 it 1: v1 ran</li>');
    expect(html).not.toContain('not ours');
    expect(html).toMatch(/data-testid="mass-cancel"(?![^>]*disabled)/);
    l.getState().receiveMass(ev({ type: 'massJob', status: 'completed' }));
    expect(l.getState().massJob!.status).toBe('completed');
    expect(l.getState().massEvolutionId).toBe('evo-1');
    html = render(l);
    expect(html).toMatch(/data-testid="mass-cancel"[^>]*disabled/);
  });

  it('shows a refused start with the host\'s message', async () => {
    const l = scriptedLab(() => ({ startRank: async () => { throw new ApiError('BUSY', 'startRank: model /m/tiny.gguf is in use by MASS evolve evo-1', 'startRank', 'models'); } }));
    await l.getState().startMassJob({ job: 'rank', request: { dataset: 'learn-tool', model: '/m/tiny.gguf' } });
    expect(l.getState().massJobError).toBe('startRank: model /m/tiny.gguf is in use by MASS evolve evo-1');
    expect(render(l)).toContain('data-testid="mass-start-error"');
  });
});
