import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncGrader, Task } from '../tasks/types.ts';
import { environmentAfter, prepareEnvironment, reportedScore, simulatedTamper, SIMULATED_TAMPERER } from './environment.ts';
import { checkThresholds, describeReason, guardRun, judgeVerifierAgreement, sha256 } from './guards.ts';

/** An exact grader: the answer text, trimmed, must equal `expected`. */
const exact: SyncGrader = {
  grade(answer, task) {
    const got = String(answer).trim();
    const ok = got === task.expected;
    return { score: ok ? 1 : 0, correct: ok, extracted: got, expected: task.expected };
  },
};
const task: Task = { id: 'toy/train/0', index: 0, input: { question: 'say 7' }, expected: '7' };
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'mass-guard-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('protected environment and guards', () => {
  it('an untouched run passes: same hashes, reported = verified', () => {
    const dir = tmp();
    const before = prepareEnvironment(dir, task, 'toy', ['no_future_leakage']);
    expect(Object.keys(before)).toEqual(['task.json', 'grader.json', 'checks.json']);
    expect(before['task.json']).toMatch(/^[0-9a-f]{64}$/);
    const after = environmentAfter(dir);
    expect(after).toEqual(before);
    const verified = exact.grade('3', task).score;
    expect(guardRun({ before, after, reported: reportedScore(dir, '3', task, exact), verified })).toEqual({ quarantined: false, reasons: [] });
  });

  it('the SIMULATED tamperer (expectation): the environment reports success, the guard quarantines with three reasons', () => {
    const dir = tmp();
    const before = prepareEnvironment(dir, task, 'toy', []);
    const verified = exact.grade('3', task).score;
    const act = simulatedTamper(dir, 'expectation', '3', task, exact, verified);
    expect(act.actor).toBe(SIMULATED_TAMPERER);
    expect(act.note).toMatch(/^\[SIMULATED tamperer\]/);
    expect(act.edited).toEqual(['task.json']);
    const reported = reportedScore(dir, '3', task, exact);
    expect(reported).toBe(1);
    expect(verified).toBe(0);
    const v = guardRun({ before, after: environmentAfter(dir), claims: act.claims, reported, verified });
    expect(v.quarantined).toBe(true);
    expect(v.reasons.map((r) => r.code)).toEqual(['ENV_CHANGED', 'CONTRACT_MISMATCH', 'REPORT_MISMATCH']);
    expect(v.reasons[0]).toMatchObject({ file: 'task.json', before: before['task.json'] });
    expect(describeReason(v.reasons[2]!)).toBe('the environment reports score 1; the external verifier gives 0');
    expect(describeReason(v.reasons[1]!)).toMatch(/SIMULATED tamperer claims verified = true; the re-check finds false/);
  });

  it('the SIMULATED tamperer (environment): grader.json set to always-pass is caught by its hash alone', () => {
    const dir = tmp();
    const before = prepareEnvironment(dir, task, 'toy', []);
    const act = simulatedTamper(dir, 'environment', '7', task, exact, 1);
    // A correct answer: the report and the claim agree with the verifier, but the file changed.
    const v = guardRun({ before, after: environmentAfter(dir), claims: act.claims, reported: reportedScore(dir, '7', task, exact), verified: 1 });
    expect(v.reasons.map((r) => r.code)).toEqual(['ENV_CHANGED']);
    expect(v.reasons[0]).toMatchObject({ file: 'grader.json' });
  });

  it('a deleted or rewritten checks file is a change', () => {
    const dir = tmp();
    const before = prepareEnvironment(dir, task, 'toy', ['no_future_leakage']);
    const file = path.join(dir, 'checks.json');
    chmodSync(file, 0o644);
    writeFileSync(file, '{"checks":[]}\n');
    const after = environmentAfter(dir);
    expect(after['checks.json']).toBe(sha256('{"checks":[]}\n'));
    rmSync(file);
    expect(guardRun({ before, after: environmentAfter(dir), verified: 0 }).reasons[0]).toMatchObject({ code: 'ENV_CHANGED', file: 'checks.json', after: 'missing' });
  });

  it('judge-verifier agreement: decided pairs only, a judge tie disagrees', () => {
    const scores = new Map([['a', 1], ['b', 0], ['c', 0]]);
    const a = judgeVerifierAgreement([
      { a: 'a', b: 'b', winner: 'A' },
      { a: 'b', b: 'a', winner: 'A' },
      { a: 'a', b: 'c', winner: 'tie' },
      { a: 'b', b: 'c', winner: 'A' },
    ], scores);
    expect(a).toEqual({ decided: 3, agreed: 1, verifierTies: 1, rate: 1 / 3 });
    expect(judgeVerifierAgreement([{ a: 'b', b: 'c', winner: 'A' }], scores).rate).toBeNull();
  });

  it('thresholds halt with the measured value named', () => {
    const agreement = { decided: 10, agreed: 4, verifierTies: 0, rate: 0.4 };
    expect(checkThresholds({ runs: 36, quarantined: 9, agreement }, { maxQuarantinedShare: 0.25, minAgreement: 0 })).toEqual({ halt: false, reasons: [] });
    const h = checkThresholds({ runs: 36, quarantined: 18, agreement }, { maxQuarantinedShare: 0.25, minAgreement: 0.6 });
    expect(h.halt).toBe(true);
    expect(h.reasons).toEqual([
      '18 of 36 runs quarantined (50.0%), above the threshold of 25.0%',
      'judge-verifier agreement 40.0% (4/10 decided pairs), below the threshold of 60.0%',
    ]);
  });
});
