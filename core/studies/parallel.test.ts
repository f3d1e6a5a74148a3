import { describe, expect, it } from 'vitest';
import { openStore } from '../store/index.ts';
import { studyCells } from './cells.ts';
import { parseStudyPlan } from './plan.ts';
import { runToyStudy, TOY_PLAN } from './study.fixture.ts';
import type { StudyEvent } from './run.ts';

const TIMING = new Set(['startedAt', 'endedAt', 'ms', 'wallSeconds', 'seconds', 'secondsPerTask', 'trainingSeconds']);
const untimed = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(untimed);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([k]) => !TIMING.has(k)).map(([k, x]) => [k, untimed(x)]));
  return v;
};

describe('runStudy with parallel', () => {
  it('runs the ready cells at once and stores the same runs and table as one cell after another', async () => {
    const serial = openStore(':memory:');
    const wide = openStore(':memory:');
    const events: StudyEvent[] = [];
    const a = await runToyStudy(serial);
    const b = await runToyStudy(wide, { parallel: 4, onEvent: (e) => void events.push(e) });
    expect(a.status).toBe('completed');
    expect(b.status).toBe('completed');
    expect(b.calls).toBe(a.calls);
    expect(untimed(b.table)).toEqual(untimed(a.table));
    const runsOf = (s: typeof serial) => studyCells(parseStudyPlan(TOY_PLAN), a.studyId).map((c) => untimed(s.listRuns(c.experimentId)));
    expect(runsOf(wide)).toEqual(runsOf(serial));
    // The four cells were open at once: every cell started before the first finished.
    const phases = events.filter((e): e is Extract<StudyEvent, { type: 'cell' }> => e.type === 'cell' && (e.phase === 'started' || e.phase === 'finished')).map((e) => e.phase);
    expect(phases.slice(0, 4)).toEqual(['started', 'started', 'started', 'started']);
    serial.close();
    wide.close();
  });
});
