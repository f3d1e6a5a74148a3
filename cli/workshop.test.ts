import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_METHODS } from '../core/api/index.ts';
import { openStore } from '../core/store/index.ts';
import { rehearsalSource, rehearse, type StepResult, type StepRunner } from '../core/workshop/index.ts';
import { ATTENDEE_METHODS, TOKEN_HEADER } from '../host/index.ts';
import { newExperiment, runRecord, tempDir } from '../test/fixtures.ts';
import { loadScenario, startWorkshop, type RunningWorkshop } from './commands/workshop.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const scenario = loadScenario(path.join(ROOT, 'workshops/designer-or-worker.yaml'));

/** Payloads that pass validation where one is needed, so a refusal is the guard's and not the schema's. */
const PAYLOADS: Partial<Record<string, unknown>> = {
  getExperiment: { id: 'x' }, listRuns: { experimentId: 'x' }, getRunTrace: { runId: 'x' }, validateWorkflow: { text: 'name: a\nsteps: []\n' },
  addModel: { path: '/x.gguf' }, testModel: { path: '/x.gguf', prompt: 'hi' }, cancelRun: { experimentId: 'x' }, resumeRun: { experimentId: 'x' },
  startRun: { workflow: { text: 'name: a\nsteps: []\n' }, dataset: 'gsm8k', models: { default: '/x.gguf' } }, cancelTrainLoop: { loopId: 'x' }, getRollouts: { experimentId: 'x' },
  getCardEffect: { cardId: 'x' }, diffRuns: { a: 'x', b: 'y' }, getStudy: { studyId: 'x' }, getEvolution: { evolutionId: 'x' },
  getDesignDiff: { evolutionId: 'x', taskIndex: 0, a: 0, b: 1 }, getOuterLoop: { loopId: 'x' }, submitPrediction: { attendee: 'a1', stepId: 'bad-wire', choice: 'designer' },
  controlWorkshop: { action: 'reveal' }, startTrainLoop: { workflow: { text: 'x' }, dataset: 'learn-word', roles: ['w'], models: {} },
};

describe('flowlab workshop: presenter and attendee tokens, a room from the rehearsal', () => {
  const dir = tempDir('workshop');
  const db = path.join(dir, 'lab.db');
  let w: RunningWorkshop;
  let own: string;
  let other: string;
  const calls: string[] = [];

  beforeAll(async () => {
    const store = openStore(db);
    own = store.createExperiment(newExperiment({ limit: 1 })).id;
    other = store.createExperiment(newExperiment({ limit: 1 })).id;
    store.saveRun(runRecord(own, 0), []);
    store.saveRun(runRecord(other, 0), []);
    const runner: StepRunner = {
      run: async (step) => {
        calls.push(step.id);
        const r: StepResult = { stepId: step.id, truth: step.id === 'bad-wire' ? 'designer' : 'executor', headline: 'h', facts: [], chart: null, experimentIds: [own], runIds: [`${own}-r0`], command: 'c', seconds: 1, recordedAt: 1 };
        return r;
      },
    };
    await rehearse(store, scenario, runner);
    store.close();
    w = await startWorkshop({ scenario, mode: 'room', db, host: '127.0.0.1', port: 0, renderer: path.join(dir, 'no-renderer'), models: path.join(dir, 'models'), report: (id) => path.join(dir, `${id}.html`), attendeeToken: 'a'.repeat(64) });
  });
  afterAll(async () => {
    await w?.stop();
  });

  const origin = () => `http://127.0.0.1:${w.serve.server.port}`;
  const call = async (token: string, method: string, payload?: unknown) => {
    const res = await fetch(`${origin()}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', [TOKEN_HEADER]: token }, ...(payload === undefined ? {} : { body: JSON.stringify(payload) }) });
    return { status: res.status, body: (await res.json()) as { ok: boolean; result?: unknown; error?: { code: string; message: string } } };
  };

  it('prints a presenter URL with the server token and an attendee URL with the attendee token', () => {
    expect(w.presenterUrl).toBe(`${origin()}/?token=${w.serve.server.token}#/workshop/presenter`);
    expect(w.attendeeUrl).toBe(`${origin()}/?token=${'a'.repeat(64)}#/workshop`);
    expect(w.session.view().attendeeUrl).toBe(w.attendeeUrl);
  });

  it('refuses the attendee every method off the allow-list, one by one (403 FORBIDDEN), and the event stream', async () => {
    const refused = API_METHODS.filter((m) => !ATTENDEE_METHODS.includes(m));
    expect(refused).toContain('startRun');
    expect(refused).toContain('controlWorkshop');
    expect(refused.length).toBe(API_METHODS.length - 5);
    for (const m of refused) {
      const r = await call(w.attendeeToken, m, PAYLOADS[m]);
      expect([m, r.status, r.body.error?.code]).toEqual([m, 403, 'FORBIDDEN']);
    }
    const events = await fetch(`${origin()}/api/events?token=${w.attendeeToken}`);
    expect(events.status).toBe(403);
    expect((await call('b'.repeat(64), 'getWorkshop')).status).toBe(401);
  });

  it("lets the attendee read only the workshop's own experiments and runs", async () => {
    expect((await call(w.attendeeToken, 'getExperiment', { id: own })).status).toBe(200);
    expect((await call(w.attendeeToken, 'listRuns', { experimentId: own })).body.result).toHaveLength(1);
    const outside = await call(w.attendeeToken, 'getExperiment', { id: other });
    expect([outside.status, outside.body.error?.message]).toEqual([403, `getExperiment: experiment ${other} is not one of this workshop's experiments`]);
    expect((await call(w.attendeeToken, 'listRuns', { experimentId: other })).status).toBe(403);
    expect((await call(w.attendeeToken, 'getRunTrace', { runId: `${other}-r0` })).status).toBe(403);
    expect((await call(w.attendeeToken, 'getRunTrace', { runId: `${own}-r0` })).status).toBe(200);
    // The presenter's token reaches everything.
    expect((await call(w.serve.server.token, 'getExperiment', { id: other })).status).toBe(200);
  });

  it('scores attendee predictions at the presenter\'s reveal; the room replays the rehearsal byte for byte and runs nothing', async () => {
    expect((await call(w.attendeeToken, 'submitPrediction', { attendee: 'a1', stepId: 'bad-wire', choice: 'designer' })).body.result).toEqual({ predictions: 1 });
    await call(w.attendeeToken, 'submitPrediction', { attendee: 'a2', stepId: 'bad-wire', choice: 'executor' });
    const before = (await call(w.serve.server.token, 'getWorkshop')).body.result as { step: { predictions: number; reveal?: unknown } };
    expect(before.step.predictions).toBe(2);
    expect(before.step.reveal).toBeUndefined();
    const revealed = (await call(w.serve.server.token, 'controlWorkshop', { action: 'reveal' })).body.result as { step: { reveal: { result: unknown; score: unknown } } };
    expect(revealed.step.reveal.score).toEqual({ total: 2, correct: 1, share: 0.5, byChoice: { designer: 1, executor: 1, ambiguous: 0 } });
    const store = openStore(db);
    const stored = store.workshops.getResult(rehearsalSource(scenario), 'bad-wire')!.json;
    store.close();
    expect(JSON.stringify(revealed.step.reveal.result)).toBe(stored);
    const late = await call(w.attendeeToken, 'submitPrediction', { attendee: 'a3', stepId: 'bad-wire', choice: 'designer' });
    expect([late.status, late.body.error?.code]).toEqual([400, 'BAD_REQUEST']);
    expect(calls).toEqual(['bad-wire', 'bad-run']); // the rehearsal's two; nothing since
    expect(existsSync(path.join(dir, 'models'))).toBe(false); // no model folder, no model file: none could be loaded
    const report = readFileSync(w.reportFile, 'utf8');
    expect(report).toContain('<td>designer ✓ truth</td><td>1</td>');
  });
});
