import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandlers } from '../../core/api/index.ts';
import type { LabHost, StartRunRequest, StartTrainLoopRequest } from '../../core/api/lab.ts';
import { hostOver, newExperiment, storeTracker } from '../../test/fixtures.ts';
import { createLabStore } from '../state.ts';
import { plainMessage } from './loop.ts';

const TEAM = readFileSync(new URL('../../examples/gsm8k-team.yaml', import.meta.url), 'utf8');
const stores = storeTracker();
afterEach(() => stores.closeAll());

function lab() {
  const store = stores.open();
  store.createExperiment(newExperiment({ id: 'exp-cancelled', limit: 2 }));
  store.improve.saveCard({ id: 'card-1', role: 'solver', title: 't', appliesWhen: 'w', advice: 'a', sourceRuns: [], teacher: 'x', shots: 1, onlySuccesses: false, simulated: false, createdAt: 1 });
  const loops: StartTrainLoopRequest[] = [];
  const runs: StartRunRequest[] = [];
  const host: LabHost = {
    listExamples: () => [],
    listDatasets: () => [{ name: 'gsm8k', splits: ['test'], describe: '', available: true }],
    listModels: () => [],
    addModel: () => { throw new Error('no'); },
    testModel: () => { throw new Error('no'); },
    startRun: (p) => (runs.push(p), { experimentId: 'exp-new' }),
    cancelRun: () => ({ cancelled: true }),
    resumeRun: ({ experimentId }) => (experimentId === 'exp-cancelled' ? { experimentId, pending: 1, loopId: 'tl-7' } : { experimentId, pending: 0 }),
    activeRuns: () => [],
    startTrainLoop: (p) => (loops.push(p), { loopId: 'tl-1' }),
    cancelTrainLoop: () => ({ cancelled: true }),
  };
  const s = createLabStore(hostOver(createHandlers({ store, version: '1', lab: host })));
  s.getState().loadText(TEAM, 'examples/gsm8k-team.yaml');
  s.getState().setDefaultModel('/m/tiny.gguf');
  s.getState().setRunForm({ dataset: 'gsm8k', split: 'test', limit: 2, seed: 1 });
  return { s, loops, runs };
}

describe('the Run form\'s loop options', () => {
  it('adds rollouts, and hint cards and weight versions per role, to the request', () => {
    const { s } = lab();
    s.getState().setRoleCards('solver', ['card-1']);
    s.getState().setRoleCards('verifier', ['card-2']);
    s.getState().setRoleVersion('solver', 'wv-1');
    s.getState().setRoleVersion('ghost', 'wv-2');
    const req = s.getState().runRequest();
    expect(req.ok && req.request).toMatchObject({ cards: ['card-1', 'card-2'], roleVersions: { solver: 'wv-1' } });
    s.getState().setRunOptions({ kind: 'rollouts', group: 3 });
    expect(s.getState().runRequest()).toEqual({ ok: false, problems: [expect.stringMatching(/^Hint cards and weight versions are for runs only/)] });
    s.getState().setRoleCards('solver', []);
    s.getState().setRoleCards('verifier', []);
    s.getState().setRoleVersion('solver', null);
    const r = s.getState().runRequest();
    expect(r.ok && r.request).toMatchObject({ kind: 'rollouts', group: 3, temperature: 0.8 });
    s.getState().setRunOptions({ group: 65 });
    expect(s.getState().runRequest()).toEqual({ ok: false, problems: ['Rollouts per task (G) must be a whole number from 1 to 64.'] });
  });
});

describe('train loops from the window', () => {
  it('starts one with the form\'s values and follows its pushed events', async () => {
    const { s, loops } = lab();
    s.getState().setTrainLoopForm({ dataset: 'gsm8k', split: 'test', heldoutSplit: 'test', roles: ['solver', 'nobody'], group: 2, iterations: 2, limit: 2, heldout: 2, heldoutSamples: 2 });
    await s.getState().startTrainLoop();
    expect(loops).toEqual([expect.objectContaining({ dataset: 'gsm8k', split: 'test', heldoutSplit: 'test', group: 2, iterations: 2, limit: 2, heldout: 2, heldoutSamples: 2, seed: 0, threads: 1, roles: ['solver'], models: { default: '/m/tiny.gguf' } })]);
    expect(s.getState()).toMatchObject({ watchedLoop: 'tl-1', trainLoops: { 'tl-1': { status: 'starting', iterations: 2 } } });
    s.getState().receive({ type: 'trainLoop', loopId: 'tl-1', status: 'running', roles: ['solver'], done: 0, iterations: 2 });
    s.getState().receive({ type: 'trainRollout', loopId: 'tl-1', iteration: 1, done: 1, total: 4 });
    expect(s.getState().trainLoops['tl-1']).toMatchObject({ status: 'running', rollouts: { iteration: 1, done: 1, total: 4 } });
    s.getState().setTrainLoopForm({ iterations: 0 });
    expect(s.getState().trainLoopRequest()).toEqual({ ok: false, problems: ['Iterations must be a whole number from 1 to 10000.'] });
  });

  it('sends the policy step\'s lr, KL and temperature, and the SFT fields only with an SFT schedule (issue 29: the form lacked them)', async () => {
    const { s, loops } = lab();
    s.getState().setTrainLoopForm({ dataset: 'gsm8k', split: 'test', heldoutSplit: 'test', lr: 0.001, kl: 0.05, temperature: 0.7, sftSteps: 3, sftRoles: ['solver'] });
    await s.getState().startTrainLoop();
    // No warm start and no mix: no SFT fields (the host refuses sftRoles without a schedule).
    expect(loops[0]).toMatchObject({ lr: 0.001, kl: 0.05, temperature: 0.7 });
    for (const k of ['warmStart', 'sftMix', 'sftSteps', 'sftLr', 'sftRoles']) expect(loops[0]).not.toHaveProperty(k);
    s.getState().setTrainLoopForm({ warmStart: 2, sftMix: true });
    const req = s.getState().trainLoopRequest();
    expect(req.ok && req.request).toMatchObject({ warmStart: 2, sftMix: true, sftSteps: 3, sftLr: 1e-3, sftRoles: ['solver'] });
    s.getState().setTrainLoopForm({ lr: 0, kl: -1, temperature: 6, sftSteps: 0 });
    expect(s.getState().trainLoopRequest()).toEqual({ ok: false, problems: ['Learning rate must be above 0 and below 1.', 'KL weight must be from 0 to 100.', 'Temperature must be above 0 and at most 5.', 'SFT steps must be a whole number from 1 to 100.'] });
  });

  it('sends the entropy bonus and the SFT pool (the form lacked both), each left out at 0 as the CLI leaves them', async () => {
    const { s, loops } = lab();
    s.getState().setTrainLoopForm({ dataset: 'gsm8k', split: 'test', heldoutSplit: 'test' });
    await s.getState().startTrainLoop();
    expect(loops[0]).not.toHaveProperty('entropy');
    expect(loops[0]).not.toHaveProperty('sftPool');
    s.getState().setTrainLoopForm({ entropy: 0.01, sftPool: 8 });
    let req = s.getState().trainLoopRequest();
    expect(req.ok && req.request.entropy).toBe(0.01);
    // The pool only with an SFT schedule (the host refuses it without one).
    expect(req.ok && req.request).not.toHaveProperty('sftPool');
    s.getState().setTrainLoopForm({ warmStart: 1 });
    req = s.getState().trainLoopRequest();
    expect(req.ok && req.request).toMatchObject({ entropy: 0.01, warmStart: 1, sftPool: 8 });
    s.getState().setTrainLoopForm({ entropy: 2, sftPool: 1.5 });
    expect(s.getState().trainLoopRequest()).toEqual({ ok: false, problems: ['Entropy bonus must be from 0 to 1.', 'SFT pool must be a whole number of successes per class from 0 to 1000.'] });
  });

  it('resumes a cancelled experiment (a loop\'s resumes its loop) and says so', async () => {
    const { s } = lab();
    await s.getState().resumeExperiment('exp-cancelled');
    expect(s.getState().notice).toEqual({ text: 'Resumed train loop tl-7: 1 iteration(s) left. Follow it in Learning.', tone: 'info' });
    expect(s.getState().watchedLoop).toBe('tl-7');
    await s.getState().resumeExperiment('exp-none');
    expect(s.getState().notice).toMatchObject({ tone: 'error', text: expect.stringMatching(/^Could not resume exp-none: .*no experiment exp-none/) });
  });
});

describe('plainMessage', () => {
  it('drops the method name and the code tag', () => {
    expect(plainMessage('resumeRun: no experiment x [NOT_FOUND]')).toBe('no experiment x');
    expect(plainMessage('startTrainLoop: model /m is in use [BUSY models]')).toBe('model /m is in use');
  });
});

describe("the Learning form's defaults", () => {
  it("are flowlab train-loop's (TRAIN_LOOP_DEFAULTS, which cli/trainLoopDefaults.test.ts ties to the CLI's options): 10 iterations of 4 tasks x G 8, 32 held-out tasks x 4 samples, seed 0", () => {
    const f = lab().s.getState().trainLoopForm;
    expect({ iterations: f.iterations, limit: f.limit, group: f.group, heldout: f.heldout, heldoutSamples: f.heldoutSamples, seed: f.seed, lr: f.lr, kl: f.kl, temperature: f.temperature, entropy: f.entropy, warmStart: f.warmStart, sftSteps: f.sftSteps, sftLr: f.sftLr, sftPool: f.sftPool })
      .toEqual({ iterations: 10, limit: 4, group: 8, heldout: 32, heldoutSamples: 4, seed: 0, lr: 3e-4, kl: 0.02, temperature: 1, entropy: 0, warmStart: 0, sftSteps: 2, sftLr: 1e-3, sftPool: 0 });
  });
});
