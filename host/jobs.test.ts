import { describe, expect, it } from 'vitest';
import { errorText, JobTable, jobEmitter, MAX_EVENT_TEXT } from './jobs.ts';

/** A job that ends when its signal aborts (closing with 'cancelled') or when `finish` is called ('completed'). */
function waitingJob(log: string[], id: string) {
  let finish!: () => void;
  const body = (signal: AbortSignal) => new Promise<void>((resolve) => {
    finish = () => (log.push(`${id} completed`), resolve());
    signal.addEventListener('abort', () => (log.push(`${id} cancelled`), resolve()));
  });
  return { body, finish: () => finish() };
}

describe('JobTable', () => {
  it('keeps a job by id until it settles, then runs its cleanup and frees the id', async () => {
    const log: string[] = [];
    const table = new JobTable<string>();
    const a = waitingJob(log, 'a');
    table.start('a', 'a.gguf', a.body, () => log.push('a cleanup'));
    expect(table.has('a')).toBe(true);
    expect(table.metas()).toEqual(['a.gguf']);
    expect(() => table.start('a', 'other', a.body)).toThrow('JobTable.start: a is running already');
    a.finish();
    await table.settled('a');
    expect(log).toEqual(['a completed', 'a cleanup']);
    expect(table.has('a')).toBe(false);
    expect(table.metas()).toEqual([]);
  });

  it('cancel aborts the signal and resolves once the job settled; an unknown id is not cancelled', async () => {
    const log: string[] = [];
    const table = new JobTable();
    table.start('b', undefined, waitingJob(log, 'b').body, () => log.push('b cleanup'));
    await expect(table.cancel('b')).resolves.toEqual({ cancelled: true });
    expect(log).toEqual(['b cancelled', 'b cleanup']);
    await expect(table.cancel('b')).resolves.toEqual({ cancelled: false });
    await expect(table.settled('nothing')).resolves.toBeUndefined();
  });

  it('dispose cancels every job and waits for all of them', async () => {
    const log: string[] = [];
    const table = new JobTable();
    table.start('c', undefined, waitingJob(log, 'c').body);
    table.start('d', undefined, waitingJob(log, 'd').body);
    await table.dispose();
    expect(log.sort()).toEqual(['c cancelled', 'd cancelled']);
    expect(table.has('c') || table.has('d')).toBe(false);
  });
});

describe('job events', () => {
  it('jobEmitter drops a listener\'s throw and passes the event on', () => {
    const seen: number[] = [];
    const send = jobEmitter<number>((n) => {
      seen.push(n);
      throw new Error('broken listener');
    });
    expect(() => send(7)).not.toThrow();
    expect(seen).toEqual([7]);
  });

  it('errorText takes the message, or the value as text, cut at MAX_EVENT_TEXT', () => {
    expect(errorText(new Error('model load failed'))).toBe('model load failed');
    expect(errorText('plain')).toBe('plain');
    expect(errorText(new Error('x'.repeat(MAX_EVENT_TEXT + 5)))).toHaveLength(2000);
  });
});
