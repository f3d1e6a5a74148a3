import { describe, expect, it } from 'vitest';
import { openStore } from '../store/index.ts';
import { getDataset } from '../tasks/index.ts';
import { defaultTools } from '../tools/index.ts';
import { designJson, parseMassDesign } from './design.ts';
import { applyEdit, type MassEdit } from './edits.ts';
import { ldCatalogue, ldFamily, ldFirstDesign, sloppyTeam } from './learnDesign.fixture.ts';
import { collectEdits, keptCalls, opTable, pairedGain, trainingStates } from './optimizerTraining.ts';

const menu = ldFamily.editMenu!;

describe('trainingStates', () => {
  it('starts at the first design and walks 1, 2, 1, 2 … valid edits from it, the same for the same seed', () => {
    const first = ldFirstDesign();
    const a = trainingStates(first, menu, ldCatalogue, 5, 2, 7);
    expect(a.map((s) => s.path.length)).toEqual([0, 1, 2, 1, 2]);
    expect(designJson(a[0]!.design)).toBe(designJson(first));
    for (const s of a) {
      // Each state is its path applied to the first design, and it validates.
      expect(designJson(s.path.reduce(applyEdit, first))).toBe(designJson(s.design));
      expect(parseMassDesign(JSON.parse(designJson(s.design)), ldCatalogue).ok).toBe(true);
    }
    expect(trainingStates(first, menu, ldCatalogue, 5, 2, 7).map((s) => designJson(s.design))).toEqual(a.map((s) => designJson(s.design)));
    expect(trainingStates(first, menu, ldCatalogue, 3, 0, 7).map((s) => s.path.length)).toEqual([0, 0, 0]);
    expect(() => trainingStates(first, menu, ldCatalogue, 0, 2, 7)).toThrow(/count must be an integer >= 1, got 0/);
  });
});

describe('pairedGain', () => {
  it('is the mean of the paired differences', () => {
    expect(pairedGain([0, 0.5, 1], [0.5, 0.5, 0.5])).toBe(0); // (+0.5 + 0 − 0.5) / 3
    expect(pairedGain([0, 0.5], [1, 1])).toBe(0.75); // (1 + 0.5) / 2
    expect(() => pairedGain([0], [0, 1])).toThrow(/1 scores before, 2 after/);
    expect(() => pairedGain([], [])).toThrow(/at least one/);
  });
});

describe('collectEdits (SIMULATED sloppy team: the picker says search on every first try; a scripted optimizer)', () => {
  it('keeps the proposal whose design the grader scores higher on the same tasks and seeds, and only it', async () => {
    // The state: version 0 with tool_fits_request on the picker and no retry. train/0..3 are
    // weather (Cairo now), search (a story), math (add), weather (Cairo today).
    const withCheck = applyEdit(ldFirstDesign(), { op: 'add_check', agent: 'picker', check: 'tool_fits_request' });
    const edits: MassEdit[] = [
      { op: 'retry', hop: 1, max: 1 }, // the retried picker answers right: every task scores 1
      { op: 'set_instruction', agent: 'picker', instruction: 'Pick weather for a day, math for a sum.' }, // the team ignores instructions: no change
    ];
    const store = openStore(':memory:');
    const tasks = getDataset('learn-design').load({ split: 'train', limit: 4, offset: 0 });
    const c = await collectEdits({ id: 'rft-t', family: ldFamily, first: withCheck, catalogue: ldCatalogue, tasks, states: 1, samples: 2, minGain: 0.1, seed: 3 }, { store, provider: sloppyTeam(edits), tools: defaultTools() });
    // The state: the check turns the wrong tool into a missing one on the 3 non-search tasks (0.5 each: the argument), search scores 1: 2.5 / 4.
    expect(c.states[0]!.scores).toEqual([0.5, 1, 0.5, 0.5]);
    expect(c.states[0]!.mean).toBe(0.625);
    expect(c.proposals.map((p) => p.edit)).toEqual(['retry hop 1 max 1', 'set_instruction picker: Pick weather for a day, math for a sum.']);
    expect(c.proposals[0]!.scores).toEqual([1, 1, 1, 1]);
    expect(c.proposals[0]!.gain).toBe(0.375);
    expect(c.proposals[1]!.gain).toBe(0);
    expect(c.proposals.map((p) => p.kept)).toEqual([true, false]);
    expect(c.kept).toBe(1);
    expect(c.designsScored).toBe(3);
    expect(opTable(c.proposals)).toEqual([
      { op: 'retry', proposed: 1, kept: 1, meanGain: 0.375 },
      { op: 'set_instruction', proposed: 1, kept: 0, meanGain: 0 },
    ]);
    // The scripted provider records no token ids: the kept call cannot be trained on, and is counted.
    const kc = keptCalls(c.proposals, (exp) => store.getExperimentCalls(exp));
    expect(kc).toEqual({ calls: [], missing: 1 });
    // The same id reads every step back: the same records, nothing asked again.
    const again = await collectEdits({ id: 'rft-t', family: ldFamily, first: withCheck, catalogue: ldCatalogue, tasks, states: 1, samples: 2, minGain: 0.1, seed: 3 }, { store, provider: sloppyTeam([]), tools: defaultTools() });
    expect(again.proposals).toEqual(c.proposals);
    store.close();
  });
});
