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

type Answer = { status: number; headers: Headers; body: { ok: boolean; result?: unknown; error?: { code: string; message: string } } };

/** One API call over HTTP with `token` (and a `Cookie` header when given). */
async function apiCall(origin: string, token: string, method: string, payload?: unknown, cookie?: string): Promise<Answer> {
  const res = await fetch(`${origin}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', [TOKEN_HEADER]: token, ...(cookie && { cookie }) }, ...(payload === undefined ? {} : { body: JSON.stringify(payload) }) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

/** An attendee's phone: the room token plus the identity cookie its join sets (a one-cookie jar). */
function attendee(origin: string, token: string) {
  let cookie: string | undefined;
  const me = {
    id: undefined as string | undefined,
    async call(method: string, payload?: unknown): Promise<Answer> {
      const r = await apiCall(origin, token, method, payload, cookie);
      const set = r.headers.get('set-cookie');
      if (set) cookie = set.split(';')[0];
      return r;
    },
    async join(): Promise<Answer> {
      const r = await me.call('joinWorkshop');
      me.id = (r.body.result as { attendee?: string } | undefined)?.attendee;
      return r;
    },
    setCookie(c: string | undefined) {
      cookie = c;
    },
    get cookie() {
      return cookie;
    },
  };
  return me;
}
const scenario = loadScenario(path.join(ROOT, 'workshops/designer-or-worker.yaml'));

/** Payloads that pass validation where one is needed, so a refusal is the guard's and not the schema's. */
const PAYLOADS: Partial<Record<string, unknown>> = {
  getExperiment: { id: 'x' }, listRuns: { experimentId: 'x' }, getRunTrace: { runId: 'x' }, validateWorkflow: { text: 'name: a\nsteps: []\n' },
  addModel: { path: '/x.gguf' }, testModel: { path: '/x.gguf', prompt: 'hi' }, cancelRun: { experimentId: 'x' }, resumeRun: { experimentId: 'x' },
  startRun: { workflow: { text: 'name: a\nsteps: []\n' }, dataset: 'gsm8k', models: { default: '/x.gguf' } }, cancelTrainLoop: { loopId: 'x' }, getRollouts: { experimentId: 'x' },
  getCardEffect: { cardId: 'x' }, diffRuns: { a: 'x', b: 'y' }, getStudy: { studyId: 'x' }, getEvolution: { evolutionId: 'x' },
  getDesignDiff: { evolutionId: 'x', taskIndex: 0, a: 0, b: 1 }, getOuterLoop: { loopId: 'x' }, submitPrediction: { attendee: 'a1', stepId: 'bad-wire', choice: 'designer' }, removeAttendee: { attendee: 'a1' },
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
  const call = (token: string, method: string, payload?: unknown) => apiCall(origin(), token, method, payload);

  it('prints a presenter URL with the server token and an attendee URL with the attendee token', () => {
    expect(w.presenterUrl).toBe(`${origin()}/?token=${w.serve.server.token}#/workshop/presenter`);
    expect(w.attendeeUrl).toBe(`${origin()}/?token=${'a'.repeat(64)}#/workshop`);
    expect(w.session.view().attendeeUrl).toBe(w.attendeeUrl);
  });

  it('refuses the attendee every method off the allow-list, one by one (403 FORBIDDEN), and the event stream', async () => {
    const refused = API_METHODS.filter((m) => !ATTENDEE_METHODS.includes(m));
    expect(refused).toContain('startRun');
    expect(refused).toContain('controlWorkshop');
    expect(refused.length).toBe(API_METHODS.length - 6);
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
    const a1 = attendee(origin(), w.attendeeToken);
    const a2 = attendee(origin(), w.attendeeToken);
    await a1.join();
    await a2.join();
    expect((await a1.call('submitPrediction', { attendee: 'a1', stepId: 'bad-wire', choice: 'designer' })).body.result).toEqual({ predictions: 1 });
    await a2.call('submitPrediction', { attendee: 'a2', stepId: 'bad-wire', choice: 'executor' });
    const before = (await call(w.serve.server.token, 'getWorkshop')).body.result as { step: { predictions: number; reveal?: unknown } };
    expect(before.step.predictions).toBe(2);
    expect(before.step.reveal).toBeUndefined();
    const revealed = (await call(w.serve.server.token, 'controlWorkshop', { action: 'reveal' })).body.result as { step: { reveal: { result: unknown; score: unknown } } };
    expect(revealed.step.reveal.score).toEqual({ total: 2, correct: 1, share: 0.5, byChoice: { designer: 1, executor: 1, ambiguous: 0 } });
    const store = openStore(db);
    const stored = store.workshops.getResult(rehearsalSource(scenario), 'bad-wire')!.json;
    store.close();
    expect(JSON.stringify(revealed.step.reveal.result)).toBe(stored);
    const late = await a1.call('submitPrediction', { attendee: 'a3', stepId: 'bad-wire', choice: 'designer' });
    expect([late.status, late.body.error?.code]).toEqual([400, 'BAD_REQUEST']);
    expect(calls).toEqual(['bad-wire', 'bad-run']); // the rehearsal's two; nothing since
    expect(existsSync(path.join(dir, 'models'))).toBe(false); // no model folder, no model file: none could be loaded
    const report = readFileSync(w.reportFile, 'utf8');
    expect(report).toContain('<td>designer ✓ truth</td><td>1</td>');
  });
});

describe('flowlab workshop: attendees are identities, not body fields (issue 30)', () => {
  const dir = tempDir('workshop-identity');
  const db = path.join(dir, 'lab.db');
  let w: RunningWorkshop;
  const origin = () => `http://127.0.0.1:${w.serve.server.port}`;
  const presenter = (method: string, payload?: unknown) => apiCall(origin(), w.serve.server.token, method, payload);

  beforeAll(async () => {
    const store = openStore(db);
    const runner: StepRunner = { run: async (step) => ({ stepId: step.id, truth: 'designer', headline: 'h', facts: [], chart: null, experimentIds: [], runIds: [], command: 'c', seconds: 1, recordedAt: 1 }) };
    await rehearse(store, scenario, runner);
    store.close();
    // Every test client calls from 127.0.0.1, so the per-address limit is set wide here; the per-attendee one is the default's burst of 20.
    w = await startWorkshop({
      scenario, mode: 'room', db, host: '127.0.0.1', port: 0, renderer: path.join(dir, 'no-renderer'), models: path.join(dir, 'models'), report: (id) => path.join(dir, `${id}.html`),
      roomCap: 3, limits: { perAttendee: { burst: 20, perSecond: 2 }, perAddress: { burst: 100_000, perSecond: 10_000 } },
    });
  });
  afterAll(async () => {
    await w?.stop();
  });

  it('one client with 1,000 made-up ids counts once; a second real attendee once more; over the limit 429 while the presenter is answered', async () => {
    const a = attendee(origin(), w.attendeeToken);
    const j = await a.join();
    expect([j.status, a.id]).toEqual([200, expect.stringMatching(/^at-[0-9a-f]{12}$/)]);
    expect(a.cookie).toMatch(/^flowlab_attendee=at-[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/);
    const statuses: Record<number, number> = {};
    let slowestPresenter = 0;
    let retryAfter: string | null = null;
    for (let i = 0; i < 1000; i++) {
      const r = await a.call('submitPrediction', { attendee: `fake-${i}`, stepId: 'bad-wire', choice: i % 2 ? 'designer' : 'executor' });
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status === 429) retryAfter ??= r.headers.get('retry-after');
      if (i % 100 === 99) {
        const t0 = performance.now();
        const p = await presenter('getWorkshop');
        slowestPresenter = Math.max(slowestPresenter, performance.now() - t0);
        expect(p.status).toBe(200);
      }
    }
    console.log(`workshop flood: 1000 predictions with made-up ids -> ${JSON.stringify(statuses)}; slowest presenter getWorkshop during it ${slowestPresenter.toFixed(1)} ms`);
    // The burst of 20 (less the join's token) passes, plus what refills at 2/s during the flood; the rest is refused.
    expect(statuses[200]).toBeGreaterThanOrEqual(19);
    expect(statuses[200]! + statuses[429]!).toBe(1000);
    expect(statuses[429]).toBeGreaterThan(500);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    const view = (await presenter('getWorkshop')).body.result as { step: { predictions: number }; attendees: { joined: number; cap: number } };
    expect(view.step.predictions).toBe(1);
    expect(view.attendees).toEqual({ joined: 1, cap: 3 });

    const b = attendee(origin(), w.attendeeToken);
    await b.join();
    expect(b.id).not.toBe(a.id);
    const rb = await b.call('submitPrediction', { attendee: a.id, stepId: 'bad-wire', choice: 'designer' }); // naming the other's id changes nothing
    expect([rb.status, rb.body.result]).toEqual([200, { predictions: 2 }]);
    const store = openStore(db);
    const rows = store.workshops.listPredictions(w.session.id, 'bad-wire').map((p) => p.attendee).sort();
    store.close();
    expect(rows).toEqual([a.id, b.id].sort());
    // The presenter's page keeps answering while `a` is over its limit.
    expect((await a.call('getWorkshop')).status).toBe(429);
    expect((await presenter('getWorkshop')).status).toBe(200);
  });

  it('refuses predictions without a join, with a forged cookie, from a removed attendee; joins past the room cap', async () => {
    const anon = attendee(origin(), w.attendeeToken);
    const r0 = await anon.call('submitPrediction', { attendee: 'me', stepId: 'bad-wire', choice: 'designer' });
    expect([r0.status, r0.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    anon.setCookie('flowlab_attendee=at-000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect((await anon.call('submitPrediction', { attendee: 'me', stepId: 'bad-wire', choice: 'designer' })).status).toBe(403);

    const c = attendee(origin(), w.attendeeToken);
    expect((await c.join()).status).toBe(200); // the third of three seats
    const full = await attendee(origin(), w.attendeeToken).join();
    expect([full.status, full.body.error?.message]).toEqual([403, expect.stringMatching(/room is full: 3 attendee/)]);
    expect((await c.call('submitPrediction', { attendee: 'x', stepId: 'bad-wire', choice: 'executor' })).body.result).toEqual({ predictions: 3 });
    const listed = (await presenter('listAttendees')).body.result as Array<{ id: string; address: string }>;
    expect(listed.map((x) => x.id)).toContain(c.id);
    expect(listed.every((x) => x.address.includes('127.0.0.1'))).toBe(true);
    expect((await presenter('removeAttendee', { attendee: c.id })).body.result).toEqual({ removed: c.id, predictionsDeleted: 1 });
    expect(((await presenter('getWorkshop')).body.result as { step: { predictions: number } }).step.predictions).toBe(2);
    const gone = await c.call('submitPrediction', { attendee: 'x', stepId: 'bad-wire', choice: 'executor' });
    expect([gone.status, gone.body.error?.message]).toEqual([403, expect.stringMatching(/removed you/)]);
    expect((await c.join()).status).toBe(403);
    // The attendee token cannot remove anyone.
    expect((await anon.call('removeAttendee', { attendee: c.id! })).status).toBe(403);
  });
});
