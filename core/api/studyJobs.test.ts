/** The study-job request schema (the CLI's ranges) and the pushed events' check. */
import { describe, expect, it } from 'vitest';
import { ApiError, isLabEvent, validatePayload } from './index.ts';

const bad = (payload: unknown): ApiError => {
  try {
    validatePayload('startStudy', payload);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected BAD_REQUEST');
};

describe('startStudy payload', () => {
  it('accepts a shipped plan or a pasted one with the options of flowlab study', () => {
    expect(validatePayload('startStudy', { planName: 'laptop.yaml', dryRun: true, threads: 1, calibrationTasks: 2 })).toEqual({ planName: 'laptop.yaml', dryRun: true, threads: 1, calibrationTasks: 2 });
    expect(validatePayload('startStudy', { planText: 'name: x\n', model: '/m/a.gguf', budgetTokens: 10, budgetMinutes: 0.5 })).toMatchObject({ budgetMinutes: 0.5 });
  });

  it('refuses each bad field by name, in the CLI ranges', () => {
    expect(bad({ planName: '../x.yaml' }).field).toBe('planName');
    expect(bad({ planName: 'a/b.yaml' }).field).toBe('planName');
    expect(bad({ planName: 'plan.txt' }).field).toBe('planName');
    expect(bad({ planText: 'name: x\n', threads: 0 }).field).toBe('threads');
    expect(bad({ planText: 'name: x\n', calibrationTasks: 65 }).field).toBe('calibrationTasks');
    expect(bad({ planText: 'name: x\n', budgetMinutes: 0 }).field).toBe('budgetMinutes');
    expect(bad({ planText: 'name: x\n', model: 'relative.gguf' }).field).toBe('model');
    expect(bad({ planText: 'name: x\n', out: '/tmp' }).message).toMatch(/out/);
    expect(bad({}).message).toMatch(/exactly one of planName \(a shipped plan\) and planText/);
    expect(bad({ planName: 'a.yaml', planText: 'x' }).field).toBe('planName');
  });
});

describe('study job events', () => {
  it('are LabEvents when well formed, and refused field by field', () => {
    expect(isLabEvent({ type: 'studyJob', studyId: 's1', dryRun: false, status: 'running' })).toBe(true);
    expect(isLabEvent({ type: 'studyJob', studyId: 's1', dryRun: true, status: 'completed', estimate: { cells: 1, units: 0, runs: 2, calls: 2, tokens: 40, seconds: 1.5 } })).toBe(true);
    expect(isLabEvent({ type: 'studyProgress', studyId: 's1', line: 'cell a: run 1/2', done: 0, total: 1 })).toBe(true);
    expect(isLabEvent({ type: 'studyJob', studyId: 's1', dryRun: true, status: 'completed', estimate: { cells: 1 } })).toBe(false);
    expect(isLabEvent({ type: 'studyJob', studyId: 's1', status: 'running' })).toBe(false);
    expect(isLabEvent({ type: 'studyJob', studyId: 's1', dryRun: false, status: 'paused' })).toBe(false);
    expect(isLabEvent({ type: 'studyProgress', studyId: 's1', line: '', done: 0 })).toBe(false);
    expect(isLabEvent({ type: 'studyProgress', studyId: 's1', line: 'x', done: -1 })).toBe(false);
  });
});
