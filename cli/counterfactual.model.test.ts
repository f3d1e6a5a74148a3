/**
 * Counterfactual blame on a designer team with natural failures (docs/fork.md, "A designer team
 * with natural failures"): examples/designer-team.yaml on 30 learn-design training tasks with the
 * tiny real model stories260K (one thread), then `flowlab counterfactual --intervene each-node
 * --with oracle --save`. Structure blames nobody in a silent run (wrong answer, every node ok); the
 * forks give some of them a located cause. The test checks the report against the store (which
 * runs are silent, which forks flipped), prints the fraction, and re-makes one located cause's fork
 * with the ordinary `flowlab fork` command: it flips the run again, the parent unchanged.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, tempDir, tinyModel as model } from '../test/fixtures.ts';

if (!haveShared) noteSkip('counterfactual.model.test', 'counterfactual blame of the designer team', `${model} or the shared data`);

let db = '';
let experimentId = '';

interface Trial { nodeId: string; attempt: number; role: string | null; answerNode: boolean; flipped: boolean | null; forkRunId?: string }
interface Verdict { runId: string; silent: boolean; roots: unknown[]; trials: Trial[]; cause?: { nodeId: string; role: string | null; answerNode: boolean } }

describe.skipIf(!haveShared)('counterfactual blame of a designer team with natural failures (designer-team, learn-design, stories260K)', () => {
  beforeAll(async () => {
    db = path.join(tempDir('cli-counterfactual-model'), 'cf.db');
    const r = await cli(['run', 'examples/designer-team.yaml', '--dataset', 'learn-design', '--split', 'train', '--limit', '30', '--model', model, '--threads', '1', '--db', db, '--json']);
    expect(r.code, r.err).toBe(0);
    experimentId = JSON.parse(r.out).experimentId as string;
  }, 180_000);

  it('gives a located cause to a fraction of the silent runs, each a fork that flips the run', async () => {
    const r = await cli(['counterfactual', experimentId, '--intervene', 'each-node', '--with', 'oracle', '--save', '--threads', '1', '--db', db, '--json']);
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out) as { runs: number; silent: { runs: number; located: number; fraction: number | null; answerOnly: number; byRole: Record<string, number> }; verdicts: Verdict[] };

    // Silent runs, read from the store: a wrong answer with every node run ok.
    const store = openStore(db);
    try {
      const runs = store.listRuns(experimentId);
      const silentIds = runs.filter((run) => !run.correct && store.getRunEvents(run.runId).every((e) => e.status === 'ok')).map((run) => run.runId);
      expect(silentIds.length).toBeGreaterThan(0);
      expect(report.silent.runs).toBe(silentIds.length);
      expect(report.verdicts.filter((v) => v.silent).map((v) => v.runId).sort()).toEqual([...silentIds].sort());
      for (const v of report.verdicts.filter((x) => x.silent)) expect(v.roots).toEqual([]); // structure blames nobody

      // A located cause: the most upstream flipping fix, and it is not the answer node's.
      const located = report.verdicts.filter((v) => v.silent && v.cause && !v.cause.answerNode);
      expect(report.silent.located).toBe(located.length);
      expect(report.silent.fraction).toBeCloseTo(located.length / silentIds.length, 12);
      const byRole: Record<string, number> = {};
      for (const v of located) {
        byRole[v.cause!.role!] = (byRole[v.cause!.role!] ?? 0) + 1;
        const flip = v.trials.find((t) => t.nodeId === v.cause!.nodeId && t.flipped === true)!;
        expect(flip.answerNode).toBe(false);
        // The saved fork of that trial is stored, graded correct, and linked to the silent run.
        expect(store.getRun(flip.forkRunId!).correct).toBe(true);
        expect(store.forks.linkOf(flip.forkRunId!)).toMatchObject({ parentRunId: v.runId, nodeId: flip.nodeId, attempt: flip.attempt });
      }
      expect(report.silent.byRole).toEqual(byRole);
      expect(report.silent.answerOnly).toBe(report.verdicts.filter((v) => v.silent && v.cause?.answerNode).length);
      console.log(`[counterfactual designer-team] ${runs.length} runs, ${runs.filter((x) => x.correct).length} correct; silent ${silentIds.length}; given a located cause ${located.length} (${(100 * located.length / silentIds.length).toFixed(0)}%) ${JSON.stringify(byRole)}; flipped only by the answer node's oracle ${report.silent.answerOnly}`);
      expect(located.length).toBeGreaterThan(0);

      // The first located cause re-made with `flowlab fork` and the same corrected output flips the run again.
      const v = located[0]!;
      const flip = v.trials.find((t) => t.nodeId === v.cause!.nodeId && t.flipped === true)!;
      const output = String(store.forks.linkOf(flip.forkRunId!)!.intervention.output);
      const before = JSON.stringify({ run: store.getRun(v.runId), events: store.getRunEvents(v.runId) });
      store.close();
      const f = await cli(['fork', v.runId, '--node', `${flip.nodeId}@${flip.attempt}`, '--output', output, '--threads', '1', '--db', db, '--json']);
      expect(f.code, f.err).toBe(0);
      expect(JSON.parse(f.out)).toMatchObject({ parentRunId: v.runId, parentCorrect: false, correct: true });
      const after = openStore(db);
      try {
        expect(JSON.stringify({ run: after.getRun(v.runId), events: after.getRunEvents(v.runId) })).toBe(before);
      } finally {
        after.close();
      }
    } finally {
      try { store.close(); } catch { /* closed above */ }
    }
  }, 300_000);
});
