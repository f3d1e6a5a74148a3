import { describe, expect, it } from 'vitest';
import { EARLY_EVENTS, followJob, withProgress } from './jobFollow.ts';

interface Job { id: string; status: 'starting' | 'running' | 'done'; lines: string[]; done?: number; total?: number }
type Ev = { id: string; status: Job['status'] } | { id: string; line: string; done?: number; total?: number };

function follower() {
  let job: Job | null = null;
  const ends: string[] = [];
  const f = followJob<Job, Ev>({
    idOfEvent: (e) => e.id, idOfJob: (j) => j.id,
    fold: (j, e) => ('status' in e ? { ...j, status: e.status } : withProgress(j, e, 2)),
    ended: (j) => j.status === 'done',
    get: () => job, set: (j) => void (job = j),
    onEnd: async (j) => void ends.push(j.id),
  });
  return { f, ends, job: () => job, start: (id: string) => (job = f.started({ id, status: 'starting', lines: [] })) };
}

describe('followJob: a started job and its pushed events', () => {
  it('folds the events sent before the start answered, then each event of the job; ends once', () => {
    const t = follower();
    t.f.receive({ id: 'j1', status: 'running' });
    t.f.receive({ id: 'other', line: 'not ours' });
    t.f.receive({ id: 'j1', line: 'a', done: 0, total: 3 });
    expect(t.start('j1')).toEqual({ id: 'j1', status: 'running', lines: ['a'], done: 0, total: 3 });
    t.f.receive({ id: 'j1', line: 'b', done: 1 });
    t.f.receive({ id: 'j1', line: 'c', done: 2 });
    expect(t.job()).toEqual({ id: 'j1', status: 'running', lines: ['b', 'c'], done: 2, total: 3 });
    t.f.receive({ id: 'j1', status: 'done' });
    t.f.receive({ id: 'j1', status: 'done' });
    expect(t.ends).toEqual(['j1']);
  });

  it(`keeps the latest ${EARLY_EVENTS} early events, and a reset forgets them`, () => {
    const t = follower();
    t.f.receive({ id: 'j2', status: 'running' }); // the oldest: dropped once EARLY_EVENTS newer ones came
    for (let i = 1; i <= EARLY_EVENTS; i++) t.f.receive({ id: 'j2', line: `l${i}`, done: i });
    expect(t.start('j2')).toEqual({ id: 'j2', status: 'starting', lines: [`l${EARLY_EVENTS - 1}`, `l${EARLY_EVENTS}`], done: EARLY_EVENTS });
    t.f.receive({ id: 'j3', status: 'running' });
    t.f.reset();
    expect(t.start('j3')).toEqual({ id: 'j3', status: 'starting', lines: [] });
  });
});
