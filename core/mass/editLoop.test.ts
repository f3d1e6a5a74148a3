import { describe, expect, it } from 'vitest';
import { ReplayProvider } from '../../models/replay/index.ts';
import { openStore } from '../store/index.ts';
import { createLearnDesignDataset } from '../tasks/learnDesign.ts';
import { defaultTools } from '../tools/index.ts';
import { EDIT_TOKENS } from './editOptimizer.ts';
import { evolve, settingsOf } from './inner.ts';
import { sloppyTeam, ldCatalogue, ldFamily, ldFirstDesign } from './learnDesign.fixture.ts';
import { replayEvolution } from './replay.ts';
import { timelineOf } from './timeline.ts';
import { spec as toolSpec } from './loop.fixture.ts';

const family = ldFamily;
const catalogue = ldCatalogue;
const first = ldFirstDesign();
const tools = defaultTools();
const values = (store: ReturnType<typeof openStore>, evo: string, kind: string) => store.mass.list(evo, kind).map((r) => r.value as Record<string, unknown>);

describe('evolve with the edit optimizer (SIMULATED sloppy team, scripted optimizer and judge)', () => {
  it('applies each proposed edit, keeps the version that fixes the class of mistakes, and replays without a model', async () => {
    const store = openStore(':memory:');
    const tasks = createLearnDesignDataset().load({ split: 'train', limit: 1 }); // weather: the sloppy picker's first try is wrong
    const team = sloppyTeam([
      { op: 'add_check', agent: 'picker', check: 'tool_fits_request' },
      { op: 'retry', hop: 1, max: 1 },
      { op: 'add_check', agent: 'filler', check: 'argument_in_request' },
    ]);
    const report = await evolve({ evolutionId: 'ed', family, tasks, firstDesign: first, iterations: 4, rule: 'direct', seed: 3, catalogue }, { store, provider: team, tools });
    const settings = store.mass.get('ed', 'evolution', 'settings')!.value as Record<string, unknown>;
    expect([settings.optimizerMode, settings.optimizerTokens]).toEqual(['edit', EDIT_TOKENS]);
    // Every proposal was one of the grammar's edits, accepted, applied as written.
    expect(team.proposed).toEqual(['{"op":"add_check","agent":"picker","check":"tool_fits_request"}', '{"op":"retry","hop":1,"max":1}', '{"op":"add_check","agent":"filler","check":"argument_in_request"}']);
    const proposals = values(store, 'ed', 'proposal');
    expect(proposals.map((p) => [p.accepted, (p.proposal as { changes_from_previous: string }).changes_from_previous])).toEqual([
      [true, 'add_check picker tool_fits_request'],
      [true, 'retry hop 1 max 1'],
      [true, 'add_check filler argument_in_request'],
    ]);
    const designs = values(store, 'ed', 'design').map((d) => JSON.parse(d.design as string) as { agents: Array<{ contract: { checks: string[] } }>; hops: Array<{ redelegate?: unknown }> });
    expect(designs.map((d) => [d.agents.map((a) => a.contract.checks.join(',')), d.hops.map((h) => (h.redelegate ? 'retry' : '-'))])).toEqual([
      [['', ''], ['-', '-']],
      [['tool_fits_request', ''], ['-', '-']],
      [['tool_fits_request', ''], ['retry', '-']],
      [['tool_fits_request', 'argument_in_request'], ['retry', '-']],
    ]);
    // By hand: v0 and v1 get the argument only (0.5); the retry fixes the tool (1.0).
    expect(values(store, 'ed', 'workspace').map((w) => w.score)).toEqual([0.5, 0.5, 1, 1]);
    // Direct rule: v1 ties v0, v2 beats it, v3 ties v2.
    expect(values(store, 'ed', 'champion').map((c) => c.version)).toEqual([0, 2]);
    expect(report.tasks[0]).toMatchObject({ champion: 2, versions: 4, rejected: 0, championScore: 1 });
    // The timeline names the edit behind each version.
    expect(timelineOf('ed', store.mass.list('ed')).tasks[0]!.iterations.map((i) => i.edit ?? '-')).toEqual(['-', 'add_check picker tool_fits_request', 'retry hop 1 max 1', 'add_check filler argument_in_request']);
    const replay = await replayEvolution(store, 'ed', { family, tools, providerFor: (exp) => new ReplayProvider(store.getExperimentCalls(exp)) });
    expect(replay.mismatches).toEqual([]);
    expect(replay.matched).toBe(replay.records);
    expect(replay.modelsLoaded).toBe(0);
    store.close();
  });

  it('with the verifier judge, the family\'s grader decides each pair (no judge call) and picks the same champion', async () => {
    const store = openStore(':memory:');
    const tasks = createLearnDesignDataset().load({ split: 'train', limit: 1 });
    const team = sloppyTeam([{ op: 'add_check', agent: 'picker', check: 'tool_fits_request' }, { op: 'retry', hop: 1, max: 1 }]);
    const report = await evolve({ evolutionId: 'ev', family, tasks, firstDesign: first, iterations: 3, rule: 'direct', seed: 3, catalogue, judge: 'verifier', auditSwaps: 2 }, { store, provider: team, tools });
    expect(report.tasks[0]!.champion).toBe(2);
    expect(values(store, 'ev', 'verdict').map((v) => v.rationale)).toEqual(['external grader: A 0.50, B 0.50', expect.stringMatching(/^external grader: A (1\.00, B 0\.50|0\.50, B 1\.00)$/)]);
    expect(store.listExperiments().filter((x) => x.id.includes('.vs-'))).toEqual([]);
    expect((store.mass.get('ev', 'evolution', 'settings')!.value as { judge?: string }).judge).toBe('verifier');
    const replay = await replayEvolution(store, 'ev', { family, tools, providerFor: (exp) => new ReplayProvider(store.getExperimentCalls(exp)) });
    expect(replay.mismatches).toEqual([]);
    store.close();
  });

  it('the random proposer (SIMULATED baseline) draws valid new edits from the seed, with no model call, and replays', async () => {
    const tasks = createLearnDesignDataset().load({ split: 'train', limit: 1 });
    const proposalsOf = async (store: ReturnType<typeof openStore>) => {
      const team = sloppyTeam();
      await evolve({ evolutionId: 'rp', family, tasks, firstDesign: first, iterations: 4, rule: 'direct', seed: 5, catalogue, judge: 'verifier', proposer: 'random' }, { store, provider: team, tools });
      expect(team.proposed).toEqual([]); // the scripted optimizer was never asked
      return values(store, 'rp', 'proposal').map((p) => [p.accepted, (p.proposal as { changes_from_previous: string; why_it_should_improve: string }).changes_from_previous, (p.proposal as { why_it_should_improve: string }).why_it_should_improve]);
    };
    const a = openStore(':memory:');
    const got = await proposalsOf(a);
    expect(got).toHaveLength(3);
    for (const [accepted, , why] of got) expect([accepted, why]).toEqual([true, 'RANDOM proposer (SIMULATED): drawn uniformly among the valid edits']);
    expect(a.listExperiments().filter((x) => x.id.includes('optimizer'))).toEqual([]);
    const b = openStore(':memory:');
    expect(await proposalsOf(b)).toEqual(got);
    const replay = await replayEvolution(a, 'rp', { family, tools, providerFor: (exp) => new ReplayProvider(a.getExperimentCalls(exp)) });
    expect(replay.mismatches).toEqual([]);
    a.close();
    b.close();
    expect(() => settingsOf({ evolutionId: 'f', family, tasks, firstDesign: first, catalogue, optimizerMode: 'free', proposer: 'random' })).toThrow(/needs the edit optimizer/);
  });

  it('keeps the free optimizer for families without a menu (their stored settings unchanged) and refuses edits there', () => {
    const s = settingsOf(toolSpec('x'));
    expect('optimizerMode' in s || 'editMenu' in s).toBe(false);
    expect(s.optimizerTokens).toBe(800);
    expect(() => settingsOf({ ...toolSpec('x'), optimizerMode: 'edit' })).toThrow(/needs a family with an edit menu; learn-tool has none/);
    expect(settingsOf({ evolutionId: 'f', family, tasks: [], firstDesign: first, catalogue, optimizerMode: 'free' }).optimizerMode).toBeUndefined();
  });
});
