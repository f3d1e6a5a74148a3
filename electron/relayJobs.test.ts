/**
 * The one `job` event across main's relay (relay.ts): forwarded as it comes, and a worker that
 * dies reports every job it had running `failed` (what it had done kept), before the older
 * families' own failure events — so the window's Jobs list does not keep a dead job running.
 */
import { describe, expect, it } from 'vitest';
import type { LabEvent } from '../core/api/index.ts';
import { createLabRelay, type WorkerLink } from './relay.ts';

/** A worker link the test speaks for. */
function stubWorker() {
  let toMain: (m: unknown) => void = () => {};
  let exit: (code: number) => void = () => {};
  const link: WorkerLink = { postMessage: () => {}, onMessage: (l) => (toMain = l), onExit: (l) => (exit = l), kill: () => exit(15) };
  return { link, say: (event: LabEvent) => toMain({ kind: 'event', event }), exit: (code: number) => exit(code) };
}

describe('job events over the relay', () => {
  it('forwards them and reports the running jobs failed when the worker dies; ended jobs are not reported again', () => {
    const worker = stubWorker();
    const events: LabEvent[] = [];
    const relay = createLabRelay({ spawn: () => worker.link, config: { dbFile: '/d/f.db', modelDir: '/d/m', examplesDir: '/app/examples' }, onEvent: (e) => events.push(e) });
    relay.start();
    worker.say({ type: 'job', kind: 'download', id: 'dl-1', status: 'running', done: 0, total: 100, summary: 'a.gguf' });
    worker.say({ type: 'job', kind: 'download', id: 'dl-1', status: 'running', done: 40, total: 100, summary: 'a.gguf' });
    worker.say({ type: 'job', kind: 'evolve', id: 'evo-1', status: 'running' });
    worker.say({ type: 'job', kind: 'evolve', id: 'evo-1', status: 'completed', done: 1, total: 1 });
    worker.say({ type: 'experiment', experimentId: 'exp-1', status: 'running', done: 0, total: 2 });
    worker.say({ type: 'job', kind: 'run', id: 'exp-1', status: 'running', done: 0, total: 2 });
    expect(events).toHaveLength(6);
    worker.exit(139);
    expect(events.slice(6)).toEqual([
      { type: 'job', kind: 'download', id: 'dl-1', status: 'failed', done: 40, total: 100, summary: 'a.gguf', message: 'the lab worker stopped (exit code 139)' },
      { type: 'job', kind: 'run', id: 'exp-1', status: 'failed', done: 0, total: 2, message: 'the lab worker stopped (exit code 139)' },
      { type: 'experiment', experimentId: 'exp-1', status: 'failed', done: 0, total: 2, message: 'the lab worker stopped (exit code 139); resume the experiment to finish it' },
    ]);
  });
});
