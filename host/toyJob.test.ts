/**
 * A new kind of work is one file and its registration (issue 28): a toy kind, `count`, defined
 * here and registered with `builtinJobKinds().register(count)` — nothing else changes — is
 * listed, started, cancelled and resumed through the lab API (`listJobKinds`, `startJob`,
 * `cancelJob`, `resumeJob`, the one `job` event) and through the CLI face (`flowlab job`'s
 * functions, in process, since the toy is registered in this process only). The toy keeps its
 * state in this file's memory (it is a toy: no store table of its own).
 */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/api/index.ts';
import { builtinJobKinds, progressFold, type JobEvent, type JobKind, type JobProgress } from '../core/jobs/index.ts';
import { listKinds, resumeJobCommand, startJobCommand } from '../cli/commands/job.ts';
import { labHostOptions, labPerTest, rejectionOf } from '../test/fixtures.ts';
import { createLabHost } from './index.ts';

// ---- the toy kind: its whole definition -------------------------------------------------------
/** Where each count got to (the toy's "store"). */
const saved = new Map<string, { to: number; done: number }>();
/** Steps past `freeSteps` wait for `release()` (or the job's cancel). */
let freeSteps = Infinity;
let release: () => void = () => {};

const count: JobKind<{ to: number }, JobProgress> = {
  name: 'count',
  family: 'toy',
  describe: 'counts to `to`, one step at a time (a toy)',
  spec: z.strictObject({ to: z.number().int().min(1).max(100) }),
  start: (spec, ctx) => ({ done: countFrom(ctx.id, spec.to, 0, ctx) }),
  resume: (ctx) => {
    const s = saved.get(ctx.id);
    if (!s) throw new Error(`no count ${ctx.id}`);
    return { done: countFrom(ctx.id, s.to, s.done, ctx), pending: s.to - s.done };
  },
  fold: progressFold,
};

async function countFrom(id: string, to: number, from: number, ctx: { signal: AbortSignal; update(p: JobProgress): void }) {
  for (let k = from + 1; k <= to; k++) {
    if (k > freeSteps) {
      await new Promise<void>((resolve) => {
        release = resolve;
        ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    if (ctx.signal.aborted) return { status: 'cancelled' as const };
    saved.set(id, { to, done: k });
    ctx.update({ done: k, total: to, summary: `counted to ${k}` });
  }
  return { status: 'completed' as const };
}
// ---- its registration --------------------------------------------------------------------------
const registry = () => builtinJobKinds().register(count);
// -------------------------------------------------------------------------------------------------

const t = labPerTest('toy-job', (h) => createLabHost({ ...labHostOptions(h), jobKinds: registry() }));

/** Resolves once `events` holds a `job` event matching `p`. */
async function until(events: readonly unknown[], p: (e: JobEvent) => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (events.some((e) => (e as JobEvent).type === 'job' && p(e as JobEvent))) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('no such job event');
}

describe('a toy job kind through the lab API', () => {
  it('is listed beside the built-in kinds', async () => {
    const kinds = await t.api.listJobKinds();
    expect(kinds.find((k) => k.name === 'count')).toEqual({ name: 'count', family: 'toy', describe: 'counts to `to`, one step at a time (a toy)', startable: true, resumable: true });
    expect(kinds.map((k) => k.name)).toEqual(['run', 'blame-eval', 'rollouts', 'train-loop', 'evolve', 'rank', 'rsi', 'study', 'download', 'fork', 'count']);
    expect(kinds.find((k) => k.name === 'run')).toMatchObject({ family: 'experiment', startable: false, startVia: { method: 'startRun', command: 'flowlab run' }, configVersion: 1 });
  });

  it('is started, cancelled mid-way and resumed to its end, with one `job` event stream', async () => {
    freeSteps = 2;
    const { id, kind } = await t.api.startJob({ kind: 'count', spec: { to: 5 } });
    expect(kind).toBe('count');
    await until(t.events, (e) => e.done === 2);
    expect(await t.api.listJobs()).toEqual([{ kind: 'count', id, status: 'running', done: 2, total: 5, summary: 'counted to 2', startedAt: expect.any(Number) }]);
    await expect(t.api.cancelJob({ kind: 'count', id })).resolves.toEqual({ cancelled: true });
    expect(t.events.at(-1)).toEqual({ type: 'job', kind: 'count', id, status: 'cancelled', done: 2, total: 5, summary: 'counted to 2' });
    expect(await t.api.listJobs()).toEqual([]);
    await expect(t.api.cancelJob({ kind: 'count', id })).resolves.toEqual({ cancelled: false });

    freeSteps = Infinity;
    await expect(t.api.resumeJob({ kind: 'count', id })).resolves.toEqual({ kind: 'count', id, pending: 3 });
    await t.lab.jobs.settled(id);
    const mine = t.events.filter((e) => e.type === 'job' && e.id === id) as JobEvent[];
    expect(mine.map((e) => `${e.status}:${e.done ?? '-'}`)).toEqual(['running:1', 'running:2', 'running:2', 'cancelled:2', 'running:3', 'running:4', 'running:5', 'running:5', 'completed:5']);
    expect(saved.get(id)).toEqual({ to: 5, done: 5 });
  });

  it.each<[string, { kind: string; spec: unknown }, string, string, string]>([
    ['a spec field of the wrong form', { kind: 'count', spec: { to: 'five' } }, 'BAD_REQUEST', 'spec.to', 'startJob: spec.to: Invalid input: expected number, received string'],
    ['a field the kind does not use', { kind: 'count', spec: { to: 2, colour: 'red' } }, 'BAD_REQUEST', 'spec.colour', 'startJob: spec.colour: not used by job kind "count"'],
    ['an unknown kind', { kind: 'nope', spec: {} }, 'BAD_REQUEST', 'kind', 'startJob: unknown job kind "nope" (kinds: run, blame-eval, rollouts, train-loop, evolve, rank, rsi, study, download, fork, count)'],
    ['a kind started by its own method', { kind: 'run', spec: {} }, 'BAD_REQUEST', 'kind', 'startJob: job kind "run" is not started through startJob: start it with startRun (flowlab run)'],
  ])('startJob refuses %s, naming the field', async (_what, payload, code, field, message) => {
    const err = await rejectionOf(ApiError, t.api.startJob(payload));
    expect([err.code, err.field, err.message]).toEqual([code, field, message]);
    expect(await t.api.listJobs()).toEqual([]);
  });
});

describe('the same toy kind through the CLI face (`flowlab job`)', () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { stdout: (s: string) => void out.push(s), stderr: (s: string) => void err.push(s), isTTY: false } };
  };

  it('lists it, starts it, cancels it (Ctrl-C: the signal) and resumes it', async () => {
    const a = io();
    await expect(listKinds({ registry: registry(), io: a.io, db: '' }, true)).resolves.toBe(0);
    expect((JSON.parse(a.out.join('')) as Array<{ name: string }>).map((k) => k.name)).toContain('count');

    freeSteps = 3;
    const b = io();
    const ctrlC = new AbortController();
    const started = startJobCommand({ registry: registry(), io: b.io, db: '', signal: ctrlC.signal }, 'count', { to: 4 });
    for (let i = 0; i < 200 && !b.err.some((l) => l.includes('running 3/4')); i++) await new Promise((r) => setTimeout(r, 5));
    ctrlC.abort();
    await expect(started).resolves.toBe(130);
    const end = JSON.parse(b.out.join('')) as JobEvent;
    expect(end).toMatchObject({ type: 'job', kind: 'count', status: 'cancelled', done: 3, total: 4 });

    freeSteps = Infinity;
    const c = io();
    await expect(resumeJobCommand({ registry: registry(), io: c.io, db: '' }, 'count', end.id)).resolves.toBe(0);
    expect(JSON.parse(c.out.join(''))).toEqual({ type: 'job', kind: 'count', id: end.id, status: 'completed', done: 4, total: 4, summary: 'counted to 4' });
    // Resumed from 3: one step (its update, then the `running` announcement).
    expect(c.err).toEqual([`count ${end.id}: running 4/4 — counted to 4\n`, `count ${end.id}: running 4/4 — counted to 4\n`]);
  });
});
