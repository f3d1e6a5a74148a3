import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LabEvent } from '../core/api/index.ts';
import { newExperiment, runRecord, scratchDir, storeTracker } from '../test/fixtures.ts';
import { createLabHost } from './labHost.ts';
import { watchStore } from './storeWatch.ts';

const scratch = scratchDir('store-watch');
const stores = storeTracker();
afterEach(() => stores.closeAll());

describe('watching the store for writes by anyone (host/storeWatch.ts)', () => {
  it('reports another connection\'s commits (another process: the CLI) by area, once per burst', () => {
    const file = path.join(scratch(), 'two.db');
    const served = stores.open(file);
    const cli = stores.open(file);
    const events: LabEvent[] = [];
    const watch = watchStore(served, (e) => events.push(e), 60_000);
    expect(watch.check()).toEqual([]); // nothing written yet

    const exp = cli.createExperiment(newExperiment({ limit: 2 }));
    cli.saveRun(runRecord(exp.id, 0), []);
    cli.saveRun(runRecord(exp.id, 1), []);
    expect(watch.check()).toEqual(['experiments']);
    expect(events).toEqual([{ type: 'stored', areas: ['experiments'] }]);
    expect(watch.check()).toEqual([]); // nothing new since

    cli.improve.saveCard({ id: 'card-1', role: 'solver', title: 't', appliesWhen: 'w', advice: 'a', sourceRuns: [], teacher: 'scripted (simulated)', shots: 1, onlySuccesses: true, simulated: true, createdAt: 5 });
    expect(watch.check()).toEqual(['cards']);
    watch.stop();
  });

  it('reports this connection\'s own writes too, and stops once the store is closed', () => {
    const store = stores.open(path.join(scratch(), 'one.db'));
    const events: LabEvent[] = [];
    const watch = watchStore(store, (e) => events.push(e), 60_000);
    store.weights.save({ id: 'wv-1', role: 'solver', basePath: '/b.gguf', path: '/v1.gguf', iteration: 1, hyper: {}, metrics: { reward: 0.5 }, createdAt: 9 });
    expect(watch.check()).toEqual(['learning']);
    // A workshop's room (core/workshop): a session's state, then an attendee's prediction.
    store.workshops.createSession({ id: 'ws-1', scenarioId: 's', scenarioHash: 'h', mode: 'room', state: { stepIndex: 0 } });
    expect(watch.check()).toEqual(['workshop']);
    store.workshops.putPrediction('ws-1', 'step-1', 'a1', 'designer');
    expect(watch.check()).toEqual(['workshop']);
    store.close();
    expect(watch.check()).toEqual([]);
    expect(events).toEqual([{ type: 'stored', areas: ['learning'] }, { type: 'stored', areas: ['workshop'] }, { type: 'stored', areas: ['workshop'] }]);
  });

  it('runs inside the lab host when asked (flowlab serve, the desktop worker), and stops with it', async () => {
    const file = path.join(scratch(), 'host.db');
    const store = stores.open(file);
    const events: LabEvent[] = [];
    const lab = createLabHost({ store, dbFile: file, modelDir: scratch(), examplesDir: scratch(), emit: (e) => events.push(e), watchStoreMs: 20 });
    stores.open(file).createExperiment(newExperiment({ limit: 1 }));
    await expect.poll(() => events, { timeout: 5000 }).toEqual([{ type: 'stored', areas: ['experiments'] }]);
    await lab.dispose();
    stores.open(file).createExperiment(newExperiment({ limit: 1 }));
    await new Promise((r) => setTimeout(r, 100));
    expect(events).toHaveLength(1);
  });
});
