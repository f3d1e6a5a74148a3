/**
 * Train loops across main's relay to the utility process (relay.ts): `startTrainLoop` and
 * `cancelTrainLoop` travel as calls like every lab method, the loop's events are forwarded, and
 * a worker that dies reports its running loops `failed`.
 */
import { describe, expect, it } from 'vitest';
import type { LabEvent } from '../core/api/index.ts';
import { createLabRelay, type ToWorker, type WorkerLink } from './relay.ts';

/** A worker link driven by the test: it records what main posts and lets the test speak for the worker. */
function stubWorker() {
  const posted: ToWorker[] = [];
  let toMain: (m: unknown) => void = () => {};
  let exit: (code: number) => void = () => {};
  const link: WorkerLink = {
    postMessage: (m) => void posted.push(m),
    onMessage: (l) => (toMain = l),
    onExit: (l) => (exit = l),
    kill: () => exit(15),
  };
  return { link, posted, say: (m: unknown) => toMain(m), exit: (code: number) => exit(code) };
}

describe('train loops over the relay', () => {
  it('relays the calls, forwards the loop events and reports running loops failed when the worker dies', async () => {
    const worker = stubWorker();
    const events: LabEvent[] = [];
    const relay = createLabRelay({ spawn: () => worker.link, config: { dbFile: '/d/f.db', modelDir: '/d/m', examplesDir: '/app/examples' }, onEvent: (e) => events.push(e) });
    const started = relay.startTrainLoop!({ workflowText: 'name: x\n', dataset: 'learn-word', models: { default: '/m/a.gguf' } });
    const call = worker.posted.find((m) => m.kind === 'call');
    expect(call).toMatchObject({ kind: 'call', method: 'startTrainLoop', payload: { dataset: 'learn-word' } });
    const running = { type: 'trainLoop', loopId: 'tl-1', status: 'running', roles: ['writer'], done: 0, iterations: 3 } as const;
    worker.say({ kind: 'event', event: running });
    worker.say({ kind: 'result', id: (call as { id: number }).id, ok: true, result: { loopId: 'tl-1' } });
    await expect(started).resolves.toEqual({ loopId: 'tl-1' });
    const iteration = { type: 'trainIteration', loopId: 'tl-1', iteration: 1, experimentId: 'exp-1', score: 0.5, sampledTokens: 12, seconds: 0.4, roles: { writer: { reward: 0.5, samples: 4, signalSamples: 2, versionId: 'v-1' } } } as const;
    worker.say({ kind: 'event', event: iteration });
    worker.say({ kind: 'event', event: { type: 'trainIteration', loopId: 'tl-1' } }); // malformed: dropped
    worker.exit(139);
    expect(events).toEqual([
      running,
      iteration,
      { type: 'trainLoop', loopId: 'tl-1', status: 'failed', roles: ['writer'], done: 1, iterations: 3, message: 'the lab worker stopped (exit code 139); the versions written so far are recorded' },
    ]);
  });

  it('a loop that ended is not reported again', async () => {
    const worker = stubWorker();
    const events: LabEvent[] = [];
    const relay = createLabRelay({ spawn: () => worker.link, config: { dbFile: '/d/f.db', modelDir: '/d/m', examplesDir: '/app/examples' }, onEvent: (e) => events.push(e) });
    relay.start();
    worker.say({ kind: 'event', event: { type: 'trainLoop', loopId: 'tl-2', status: 'running', roles: ['writer'], done: 0, iterations: 1 } });
    worker.say({ kind: 'event', event: { type: 'trainLoop', loopId: 'tl-2', status: 'completed', roles: ['writer'], done: 1, iterations: 1 } });
    worker.exit(1);
    expect(events.map((e) => e.type === 'trainLoop' && e.status)).toEqual(['running', 'completed']);
  });
});
