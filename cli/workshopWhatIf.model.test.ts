/**
 * The workshop's "what if" step (workshops/what-if.yaml, truth `fix-saves`) run for real by the
 * CLI's step runner with the tiny model stories260K, one thread: the blame evaluation, then
 * `flowlab counterfactual --save` over it in a second child process. The reveal's truth and figures
 * are checked against the forks the store holds (each linked to a run of the blame evaluation).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { parseScenario } from '../core/workshop/index.ts';
import { haveShared, noteSkip, tempDir, tinyModel as model } from '../test/fixtures.ts';
import { cliStepRunner } from './workshopRunner.ts';

if (!haveShared) noteSkip('workshopWhatIf.model.test', 'the workshop what-if step', `${model} or the shared data`);

describe.skipIf(!haveShared)('workshop "what if": fix the blamed designer, see whether the runs are saved (designer-team, stories260K)', () => {
  it('forks every failed run at the design node with the right design; the truth is what the stored forks show', async () => {
    const scenario = parseScenario(readFileSync('workshops/what-if.yaml', 'utf8'), 'what-if.yaml');
    const step = scenario.steps[0]!;
    const db = path.join(tempDir('workshop-what-if'), 'ws.db');
    const result = await cliStepRunner({ db, model, threads: 1 }).run(step, 0);

    const store = openStore(db);
    try {
      const [blameEval, ...forkExperiments] = result.experimentIds;
      expect(store.getExperiment(blameEval!).kind).toBe('blame-eval');
      const failed = store.listRuns(blameEval!).filter((r) => !r.correct).map((r) => r.runId);
      // Every fork is a saved `fork` experiment linked to a failed run of the blame evaluation, at the design node.
      const byParent = new Map<string, boolean>();
      for (const id of forkExperiments) {
        expect(store.getExperiment(id).kind).toBe('fork');
        const [run] = store.listRuns(id);
        const link = store.forks.linkOf(run!.runId)!;
        expect(failed).toContain(link.parentRunId);
        expect(link).toMatchObject({ nodeId: 'design', intervention: { kind: 'output' } });
        byParent.set(link.parentRunId, (byParent.get(link.parentRunId) ?? false) || run!.correct);
      }
      const tried = byParent.size;
      const saved = [...byParent.values()].filter(Boolean).length;
      expect(tried).toBeGreaterThan(0);
      expect(result.facts.find((f) => f.label === 'Runs saved')?.value).toBe(`${saved} of ${tried} tried`);
      expect(result.truth).toBe(saved * 2 > tried ? 'yes' : 'no');
      expect(result.chart).toMatchObject({ kind: 'bars', bars: [{ label: 'saved', value: saved }, { label: 'still wrong', value: tried - saved }, { label: 'no fix tried', value: failed.length - tried }] });
      expect(result.command).toMatch(/^npm run flowlab -- blame-eval .* && npm run flowlab -- counterfactual <its experiment> --intervene role:designer --with oracle --save --threads 1$/);
      console.log(`[workshop what-if] ${failed.length} failed runs, fix tried on ${tried}, saved ${saved}: truth ${result.truth}; ${result.headline}`);
    } finally {
      store.close();
    }
  }, 300_000);
});
