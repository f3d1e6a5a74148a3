import { describe, expect, it } from 'vitest';
import { ReplayProvider } from '../../models/replay/index.ts';
import { canonicalJson, openStore } from '../store/index.ts';
import { createLearnDesignDataset } from '../tasks/learnDesign.ts';
import { defaultTools } from '../tools/index.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import { deriveSeed } from '../random.ts';
import { balancedSide, evolve, selectionVerdict } from './inner.ts';
import { sloppyTeam, ldCatalogue, ldFamily, ldFirstDesign } from './learnDesign.fixture.ts';
import { replayEvolution } from './replay.ts';
import { massFamily } from './family.ts';
import { cuedArguments, cuedTool } from './learnDesignFamily.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import { timelineOf } from './timeline.ts';

const family = ldFamily;
const catalogue = ldCatalogue;
const first = ldFirstDesign();
const tools = defaultTools();
type Store = ReturnType<typeof openStore>;
const values = (store: Store, evo: string, kind: string) => store.mass.list(evo, kind).map((r) => r.value as Record<string, unknown>);

describe('selectionVerdict: the acceptance rule over k paired verdicts', () => {
  it('accepts when the candidate wins more pairs than it loses (mean gain > 0), by hand', () => {
    expect(selectionVerdict(['candidate', 'tie', 'other', 'candidate'])).toEqual({ wins: 2, losses: 1, ties: 1, meanGain: 0.25, accepted: true });
    expect(selectionVerdict(['candidate', 'other', 'tie', 'tie'])).toEqual({ wins: 1, losses: 1, ties: 2, meanGain: 0, accepted: false });
    expect(selectionVerdict(['tie', 'tie', 'tie', 'tie'])).toEqual({ wins: 0, losses: 0, ties: 4, meanGain: 0, accepted: false });
    expect(selectionVerdict(['candidate'])).toEqual({ wins: 1, losses: 0, ties: 0, meanGain: 1, accepted: true });
    expect(selectionVerdict([])).toEqual({ wins: 0, losses: 0, ties: 0, meanGain: 0, accepted: false });
  });
});

describe('evolve with a selection set (SIMULATED sloppy team, scripted edit optimizer and right-answer judge)', () => {
  // train/0 weather, train/1 search, train/2 math, train/3 weather: the sloppy picker's first try
  // (`search`) is wrong on 0, 2 and 3, right on 1; the argument is always right.
  const all = createLearnDesignDataset().load({ split: 'train', limit: 4 });
  const edits = [
    { op: 'add_check', agent: 'picker', check: 'tool_fits_request' },
    { op: 'retry', hop: 1, max: 1 },
    { op: 'add_check', agent: 'filler', check: 'tool_fits_request' },
    { op: 'add_check', agent: 'filler', check: 'argument_in_request' },
  ] as const;
  const run = async (store: Store, judge?: 'verifier') => {
    const team = sloppyTeam([...edits]);
    const report = await evolve({ evolutionId: 'sel', family, tasks: all.slice(0, 1), selection: all.slice(1), firstDesign: first, iterations: 5, rule: 'direct', seed: 3, catalogue, auditSwaps: 2, ...(judge && { judge }) }, { store, provider: team, tools });
    return { report, team };
  };

  it('runs each version on the 4 tasks with one seed per task, compares pairwise, accepts by wins > losses, and replays', async () => {
    const store = openStore(':memory:');
    const { report, team } = await run(store);
    expect(team.proposed).toHaveLength(4);
    expect(all.map((t) => t.expected)).toEqual(['weather:now', 'search:story', 'math:add', 'weather:today']);
    // Scores by hand, tasks 0..3: v0 gets the argument, and the tool on the search task only;
    // v1's check without a retry turns a wrong tool into a missing one (the same scores);
    // v2 (v1 + retry) fixes the tool (1 everywhere); v3's check on the filler fails every time
    // (argument lost); v4 (v2 + the argument check, which always passes) scores as v2.
    const scores = (v: number) => [0, 1, 2, 3].map((j) => (store.mass.get('sel', 'workspace', `t0/v${v}${j ? `/s${j}` : ''}`)!.value as { score: number }).score);
    expect([0, 1, 2, 3, 4].map(scores)).toEqual([[0.5, 1, 0.5, 0.5], [0.5, 1, 0.5, 0.5], [1, 1, 1, 1], [0.5, 0.5, 0.5, 0.5], [1, 1, 1, 1]]);
    // Hence, by hand: v1 vs v0 ties 4 (not accepted); v2 vs v0 wins 3 and ties the search task (accepted, mean gain 3/4); v3 vs v2 loses 4; v4 vs v2 ties 4.
    expect(values(store, 'sel', 'selection').map((s) => [s.candidate, s.against, s.wins, s.losses, s.ties, s.meanGain, s.candidateWon])).toEqual([
      [1, 'v0', 0, 0, 4, 0, false],
      [2, 'v0', 3, 0, 1, 0.75, true],
      [3, 'v2', 0, 4, 0, -1, false],
      [4, 'v2', 0, 0, 4, 0, false],
    ]);
    // Each edit is of the version just run (v1 tied: built on), except after v3, which lost: v4 edits the champion v2.
    expect(values(store, 'sel', 'proposal').map((p) => p.from)).toEqual([0, 1, 2, 2]);
    expect(values(store, 'sel', 'verdict')).toHaveLength(16);
    expect(values(store, 'sel', 'champion').map((c) => c.version)).toEqual([0, 2]);
    expect(report.tasks[0]).toMatchObject({ champion: 2, championScore: 1, selectionScores: { tasks: 4, champion: 1, first: 0.625 } });
    // The timeline shows each version's k scores and each comparison's tally.
    const its = timelineOf('sel', store.mass.list('sel')).tasks[0]!.iterations;
    expect(its.map((i) => [i.selectionScores, i.selections?.map((x) => `${x.against} ${x.wins}/${x.losses}/${x.ties} ${x.accepted}`)])).toEqual([
      [[0.5, 1, 0.5, 0.5], undefined],
      [[0.5, 1, 0.5, 0.5], ['v0 0/0/4 false']],
      [[1, 1, 1, 1], ['v0 3/0/1 true']],
      [[0.5, 0.5, 0.5, 0.5], ['v2 0/4/0 false']],
      [[1, 1, 1, 1], ['v2 0/0/4 false']],
    ]);
    // Paired by task and seed: every version runs selection task j with the same seed; the tasks' seeds differ.
    const seed = (v: number, j: number) => store.listRuns(`sel.t0.v${v}${j ? `.s${j}` : ''}`)[0]!.seed;
    for (const j of [0, 1, 2, 3]) expect(new Set([0, 1, 2, 3, 4].map((v) => seed(v, j))).size).toBe(1);
    expect(new Set([0, 1, 2, 3].map((j) => seed(0, j))).size).toBe(4);
    // The judge of pair j read selection task j's request.
    const judgeRun = store.listRuns('sel.t0.v2.vs-v0.s2')[0]!;
    expect(judgeRun.taskId).toBe(all[2]!.id);
    const replay = await replayEvolution(store, 'sel', { family, tools, providerFor: (exp) => new ReplayProvider(store.getExperimentCalls(exp)) });
    expect(replay.mismatches).toEqual([]);
    expect([replay.matched, replay.modelsLoaded]).toEqual([replay.records, 0]);
    // Same seed, same machine: a second evolution into a fresh store writes identical records.
    const again = openStore(':memory:');
    await run(again);
    expect(again.mass.list('sel').map((r) => `${r.kind} ${r.key} ${canonicalJson(r.value)}`)).toEqual(store.mass.list('sel').map((r) => `${r.kind} ${r.key} ${canonicalJson(r.value)}`));
    again.close();
    store.close();
  });

  it('with the verifier judge the grader decides each of the k pairs: the same acceptances, no judge call', async () => {
    const store = openStore(':memory:');
    await run(store, 'verifier');
    expect(values(store, 'sel', 'selection').map((s) => [s.wins, s.losses, s.ties, s.candidateWon])).toEqual([[0, 0, 4, false], [3, 0, 1, true], [0, 4, 0, false], [0, 0, 4, false]]);
    expect(store.listExperiments().filter((x) => x.id.includes('.vs-'))).toEqual([]);
    expect((store.mass.get('sel', 'evolution', 'settings')!.value as { selection: Array<{ id: string }> }).selection.map((t) => t.id)).toEqual(all.slice(1).map((t) => t.id));
    const replay = await replayEvolution(store, 'sel', { family, tools, providerFor: (exp) => new ReplayProvider(store.getExperimentCalls(exp)) });
    expect(replay.mismatches).toEqual([]);
    store.close();
  });

  it('a judge that always answers "B" (SIMULATED position judge) never makes a champion: the sides are counterbalanced', async () => {
    const store = openStore(':memory:');
    const base = sloppyTeam([...edits]);
    const positional = new ScriptedProvider(async (r) => (r.key.nodeId === 'judge' ? '{"winner":"B","rationale":"B is better."}' : (await base.generate(r)).text));
    await evolve({ evolutionId: 'pos', family, tasks: all.slice(0, 1), selection: all.slice(1), firstDesign: first, iterations: 4, rule: 'direct', seed: 3, catalogue }, { store, provider: positional, tools });
    // Each comparison shows the candidate as B in 2 of its 4 pairs: it wins those 2 and loses the other 2.
    expect(values(store, 'pos', 'selection').map((s) => [s.wins, s.losses, s.ties, s.candidateWon])).toEqual([[2, 2, 0, false], [2, 2, 0, false], [2, 2, 0, false]]);
    expect(values(store, 'pos', 'champion').map((c) => c.version)).toEqual([0]);
    for (const v of [1, 2, 3]) expect(values(store, 'pos', 'verdict').filter((x) => x.candidate === v).map((x) => x.candidateSide).sort()).toEqual(['A', 'A', 'B', 'B']);
    store.close();
  });
});

describe('evolve --judge pair: the self-judge reads the family\'s own pairwise prompt (learn-design-judge\'s format)', () => {
  const all = createLearnDesignDataset().load({ split: 'train', limit: 4 });
  const edits = [
    { op: 'guard', agent: 'picker', check: 'tool_fits_request' },
    { op: 'add_check', agent: 'filler', check: 'tool_fits_request' },
    { op: 'add_check', agent: 'filler', check: 'argument_in_request' },
  ] as const;
  /** A SIMULATED pair judge: names the side whose `<tool> <argument>` fits the request's cue words better; `A` when they fit as well (an A|B grammar has no tie). */
  const fits = (line: string, request: string) => {
    const [tool, arg] = line.split(' ');
    return (tool === cuedTool(request) ? 1 : 0) + (arg !== undefined && cuedArguments(request).includes(arg) ? 1 : 0);
  };
  const team = () => {
    const base = sloppyTeam([...edits]);
    const prompts: string[] = [];
    const p = new ScriptedProvider(async (r) => {
      if (r.key.nodeId !== 'judge') return (await base.generate(r)).text;
      prompts.push(r.prompt);
      const request = /Request: ([^\n]*)/.exec(r.prompt)![1]!;
      const a = fits(/\nA: ([^\n]*)/.exec(r.prompt)![1]!, request);
      const b = fits(/\nB: ([^\n]*)/.exec(r.prompt)![1]!, request);
      return b > a ? '"B"' : '"A"';
    });
    return Object.assign(p, { prompts });
  };

  it('judges on the k tasks with the family prompt, stores the judge, accepts the guarded version, asks nothing about identical answers, and replays', async () => {
    const store = openStore(':memory:');
    const provider = team();
    await evolve({ evolutionId: 'pj', family, tasks: all.slice(0, 1), selection: all.slice(1), firstDesign: first, iterations: 4, rule: 'direct', seed: 3, catalogue, judge: 'pair' }, { store, provider, tools });
    expect((store.mass.get('pj', 'evolution', 'settings')!.value as { judge?: string }).judge).toBe('pair');
    // The prompt is learn-design-judge's: the request, then each side's `<tool> <argument>`.
    expect(provider.prompts[0], JSON.stringify(provider.prompts[0])).toMatch(/^Request: [^\n]+\nA: [a-z]+ [a-z]+\nB: [a-z]+ [a-z]+\nRight:\n$/);
    // By hand (scores as in the test above): v1's answers are v0's on all 4 tasks, and so are
    // v4's and v2's: the same text, a tie without asking the judge. v2 fixes the tool on tasks
    // 0, 2, 3 (3 wins, the judge names the right side) and reads as v0 on task 1 (a tie); v3
    // loses the argument on all 4.
    // By hand: v1 (guard on the picker: the sloppy picker's wrong first tool is caught and asked
    // again) answers right on all 4 tasks; v0 has the wrong tool on tasks 0, 2, 3 (`search now`
    // against `weather now`: the judge names v1) and the same answer on task 1 (`search story`:
    // a tie, not asked) -> 3-0-1, accepted. v2 adds tool_fits_request to the filler, whose reply
    // has no tool: the check fails every time and the argument is lost (`weather none`) -> 0-4.
    // v2 lost, so v3 edits the champion v1: argument_in_request on the filler always passes, the
    // same answers as v1 on all 4 -> 4 ties, not asked.
    expect(values(store, 'pj', 'selection').map((x) => [x.wins, x.losses, x.ties, x.candidateWon])).toEqual([[3, 0, 1, true], [0, 4, 0, false], [0, 0, 4, false]]);
    const verdicts = values(store, 'pj', 'verdict');
    expect(verdicts.filter((v) => v.asked === false).map((v) => v.candidate)).toEqual([1, 3, 3, 3, 3]);
    expect(verdicts.filter((v) => v.asked === false).every((v) => v.winner === 'tie' && v.valid === true && v.experimentId === undefined)).toBe(true);
    // Only the 7 pairs whose answers differ were asked: 7 judge calls, each stored.
    expect(provider.prompts).toHaveLength(7);
    expect(store.listExperiments().filter((x) => /\.vs-/.test(x.id))).toHaveLength(7);
    expect(values(store, 'pj', 'champion').map((c) => c.version)).toEqual([0, 1]);
    const replay = await replayEvolution(store, 'pj', { family, tools, providerFor: (exp) => new ReplayProvider(store.getExperimentCalls(exp)) });
    expect(replay.mismatches).toEqual([]);
    store.close();
  });

  it('a family without its own pairwise prompt refuses --judge pair, naming the field', async () => {
    const store = openStore(':memory:');
    const tool = massFamily('learn-tool');
    const tasks = createLearnDataset('learn-tool', ['tool']).load({ split: 'train', limit: 1 });
    await expect(evolve({ evolutionId: 'x', family: tool, tasks, firstDesign: first, iterations: 1, catalogue, judge: 'pair' }, { store, provider: team(), tools })).rejects.toThrow(/pair judge reads the family's own pairwise prompt; learn-tool has none/);
    store.close();
  });
});

describe('the orientation coins', () => {
  it('the single-verdict coin deriveSeed % 2 alternates with the version (FNV-1a\'s low bit is the parity of the code units); the balanced one alternates over the k pairs', () => {
    // By hand: versions 1..4 end in code units 0x31..0x34, whose low bits alternate 1, 0, 1, 0.
    expect([1, 2, 3, 4].map((k) => (deriveSeed(1, 'orient', 0, k, 'direct') % 2 === 0 ? 'A' : 'B'))).toEqual(['B', 'A', 'B', 'A']);
    for (const k of [1, 2, 3, 4]) {
      const sides = [0, 1, 2, 3].map((j) => balancedSide(1, 0, k, 'direct', j));
      expect(sides.filter((x) => x === 'A')).toHaveLength(2);
      expect(sides[1]).not.toBe(sides[0]);
    }
  });
});
