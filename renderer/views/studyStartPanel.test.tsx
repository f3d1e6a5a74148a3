import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { ApiError, type LabHost, type StudyJobEvent } from '../../core/api/index.ts';
import type { LabState } from '../state.ts';
import { STUDY_FORM_DEFAULTS, studyStartOf, StudyStartPanel } from './StudyStartPanel.tsx';
import { closeViewStores, renderView, scriptedLab } from './viewTest.fixture.tsx';

afterEach(closeViewStores);

/** A lab whose host answers the study job methods by script (no model runs), with two shipped plans. */
const lab = (host: (l: StoreApi<LabState>) => Partial<LabHost>) =>
  scriptedLab(host, { listStudyPlans: () => [{ name: 'laptop.yaml', text: 'name: laptop\n' }, { name: 'single-agent.yaml', text: 'name: s\n' }] });
const render = (l: StoreApi<LabState>): string => renderView(l, <StudyStartPanel />);

const ev = (e: Omit<StudyJobEvent, 'studyId'> & Partial<StudyJobEvent>): StudyJobEvent => ({ studyId: 'study-1', ...e }) as StudyJobEvent;

describe('study start form and job progress', () => {
  it('maps the form onto startStudy: the plan by name or text, blank options left to the CLI defaults', () => {
    expect(studyStartOf(STUDY_FORM_DEFAULTS, false)).toEqual({ planName: 'laptop.yaml' });
    expect(studyStartOf({ ...STUDY_FORM_DEFAULTS, source: 'pasted', planText: 'name: x\n', model: '/m/tiny.gguf', threads: '1', budgetTokens: '500', budgetMinutes: '1.5', calibrationTasks: '2' }, true))
      .toEqual({ planText: 'name: x\n', dryRun: true, model: '/m/tiny.gguf', threads: 1, budgetTokens: 500, budgetMinutes: 1.5, calibrationTasks: 2 });
    expect(studyStartOf({ ...STUDY_FORM_DEFAULTS, threads: '0' }, false)).toEqual({ error: 'Threads must be a whole number from 1 to 256' });
    expect(studyStartOf({ ...STUDY_FORM_DEFAULTS, calibrationTasks: '2.5' }, true)).toEqual({ error: 'Calibration tasks must be a whole number from 1 to 64' });
    expect(studyStartOf({ ...STUDY_FORM_DEFAULTS, budgetMinutes: '-1' }, false)).toEqual({ error: 'Minute budget must be a number greater than 0' });
    expect(studyStartOf({ ...STUDY_FORM_DEFAULTS, source: 'pasted', planText: '  ' }, false)).toEqual({ error: 'Paste a plan first' });
  });

  it('folds the events (those sent before the start answered too), shows progress and the estimate, and shows the study when it ends', async () => {
    let requested: unknown;
    const l = lab((self) => ({
      startStudy: async (req) => {
        requested = req;
        self.getState().receiveStudy(ev({ type: 'studyJob', dryRun: true, status: 'running' }));
        self.getState().receiveStudy(ev({ type: 'studyProgress', line: 'calibrating single/tiny', done: 0, total: 1 }));
        return { studyId: 'study-1' };
      },
      cancelStudy: async () => ({ cancelled: true }),
    }));
    await l.getState().loadStudyPlans();
    await l.getState().startStudyJob({ planName: 'laptop.yaml', dryRun: true });
    expect(requested).toEqual({ planName: 'laptop.yaml', dryRun: true });
    expect(l.getState().studyJob).toMatchObject({ studyId: 'study-1', dryRun: true, status: 'running', done: 0, total: 1, lines: ['calibrating single/tiny'] });
    l.getState().receiveStudy(ev({ type: 'studyProgress', studyId: 'other', line: 'not ours' }));
    let html = render(l);
    expect(html).toContain('data-testid="study-job-status">running</span>');
    expect(html).toContain('data-testid="study-job-count">0 / 1 cells</span>');
    expect(html).toContain('<option value="single-agent.yaml">single-agent.yaml</option>');
    expect(html).not.toContain('not ours');
    expect(html).toMatch(/data-testid="study-cancel"(?![^>]*disabled)/);
    expect(html).toMatch(/data-testid="study-start"[^>]*disabled/);
    l.getState().receiveStudy(ev({ type: 'studyJob', dryRun: true, status: 'completed', estimate: { cells: 1, units: 0, runs: 2, calls: 2, tokens: 81.4, seconds: 3.6 } }));
    expect(l.getState().studyJob!.status).toBe('completed');
    expect(l.getState().studyId).toBe('study-1');
    html = render(l);
    expect(html).toContain('Estimate: 1 cell and 0 train loops left, 2 runs, 2 model calls, 81 tokens, about 4 s.');
    expect(html).toMatch(/data-testid="study-cancel"[^>]*disabled/);
  });

  it("shows a refused start in the host's words", async () => {
    const l = lab(() => ({ startStudy: async () => { throw new ApiError('BUSY', 'startStudy: study s-1 is running here', 'startStudy', 'planName'); } }));
    await l.getState().startStudyJob({ planName: 'laptop.yaml' });
    expect(l.getState().studyJobError).toBe('startStudy: study s-1 is running here');
    expect(render(l)).toContain('data-testid="study-start-error"');
  });
});
