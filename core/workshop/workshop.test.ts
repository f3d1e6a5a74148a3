import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gate, rejectionOf, runRecord, storeTracker, thrownBy } from '../../test/fixtures.ts';
import type { CreditResult, RootFailure } from '../blame/credit/types.ts';
import {
  applyControl, blamedRoleTruth, blindSpotFell, blindSpotKeptTruth, blindSpotRose, blindSpotRoseTruth, chartSvg, fixSavesTruth, initialState, tallyWhatIf, parseScenario, rehearsalSource, rehearse, rolesLearnedTruth, scorePredictions,
  secondsLeft, tallyBlame, tampererTruth, workshopReportHtml, WorkshopError, WorkshopSession, type Scenario, type StepResult, type StepRunner,
} from './index.ts';

const WORKSHOPS = path.resolve(import.meta.dirname, '../../workshops');
const stores = storeTracker();
afterEach(stores.closeAll);

const SCENARIO = `id: demo
title: Demo
summary: Two steps.
steps:
  - id: one
    title: First
    text: Think.
    run: { command: blame-eval, args: [examples/gsm8k-team.yaml, --inject, planner=error@1] }
    question: { prompt: Who?, choices: [planner, solver, nobody], truth: blamed-role }
    reveal: The planner.
  - id: two
    title: Second
    text: Again.
    run: { command: rank, args: [--simulate-tamperer, expectation], ok_exit: [3] }
    question: { prompt: Prefer?, choices: [yes, no], truth: judge-prefers-tamperer }
    reveal: Guarded.
    seconds: 30
`;

const credit = (over: Partial<CreditResult>): CreditResult => ({ roots: [], cascades: [], byRole: {}, ambiguous: [], infrastructure: [], silent: false, ...over });
const root = (nodeId: string, blamed: string | null, extra: object = {}): RootFailure => ({ nodeId, failureClass: 'execution', blamed, ...extra }) as unknown as RootFailure;

function resultOf(stepId: string, truth: string, n = 1): StepResult {
  return { stepId, truth, headline: `h${n}`, facts: [{ label: 'x', value: String(n) }], chart: { kind: 'bars', title: 't', unit: 'u', bars: [{ label: 'a', value: n }] }, experimentIds: [`exp-${stepId}`], runIds: [], command: 'npm run flowlab -- x', seconds: 1.5, recordedAt: 1000 + n };
}

/** A runner that answers from a table and counts its calls. */
function fakeRunner(truths: Record<string, string>): StepRunner & { calls: string[] } {
  const calls: string[] = [];
  return { calls, run: async (step) => (calls.push(step.id), resultOf(step.id, truths[step.id]!, calls.length)) };
}

describe('scenarios', () => {
  it('parses with defaults: bare choices get their id as label, seconds 120, ok_exit []', () => {
    const s = parseScenario(SCENARIO, 'demo.yaml');
    expect(s.steps[0]!.question.choices[0]).toEqual({ id: 'planner', label: 'planner' });
    expect(s.steps[0]!.seconds).toBe(120);
    expect(s.steps[0]!.run.ok_exit).toEqual([]);
    expect(s.steps[1]!.run.ok_exit).toEqual([3]);
  });

  it('locates every problem by file, line, column and path', () => {
    const bad = SCENARIO.replace('choices: [yes, no]', 'choices: [yes, maybe]').replace('id: two', 'id: one').replace('[--simulate-tamperer, expectation]', '[--db, x.db]').replace('seconds: 30', 'seconds: 3');
    const err = thrownBy(WorkshopError, () => parseScenario(bad, 'demo.yaml'));
    expect(err.code).toBe('BAD_SCENARIO');
    expect(err.issues.map((i) => i.path)).toEqual(['steps[1].seconds']);
    expect(err.issues[0]).toMatchObject({ line: 17, message: 'must be at least 10' });
    const cross = thrownBy(WorkshopError, () => parseScenario(bad.replace('seconds: 3', 'seconds: 30'), 'demo.yaml'));
    expect(cross.issues.map((i) => `${i.line}:${i.path}: ${i.message}`)).toEqual([
      '11:steps[1].id: step id "one" is used twice (also steps[0])',
      '15:steps[1].question.choices: truth judge-prefers-tamperer needs the choice "no"',
      '14:steps[1].run.args[0]: --db is set by `flowlab workshop` itself; leave it out',
    ]);
    expect(cross.message).toContain('demo.yaml:11:');
    const yaml = thrownBy(WorkshopError, () => parseScenario('id: [x', 'y.yaml'));
    expect(yaml.issues[0]!.line).toBe(1);
    const unknown = thrownBy(WorkshopError, () => parseScenario(SCENARIO.replace('title: Demo', 'title: Demo\ncolour: red'), 'demo.yaml'));
    expect(unknown.issues[0]).toMatchObject({ path: '', message: 'unknown field(s): colour', line: 1 });
  });

  it('ships the six scenarios, each valid', () => {
    const files = readdirSync(WORKSHOPS).filter((f) => f.endsWith('.yaml')).sort();
    expect(files).toEqual(['designer-or-worker.yaml', 'judge-blind-spot.yaml', 'silent-error.yaml', 'watch-a-team-learn.yaml', 'what-if.yaml', 'who-broke-it.yaml']);
    const parsed = files.map((f) => parseScenario(readFileSync(path.join(WORKSHOPS, f), 'utf8'), f));
    expect(parsed.map((s) => `${s.id}:${s.steps.map((x) => x.run.command).join(',')}`)).toEqual([
      'designer-or-worker:blame-eval,blame-eval', 'judge-blind-spot:rank,rsi', 'silent-error:blame-eval,blame-eval', 'watch-a-team-learn:train-loop', 'what-if:blame-eval', 'who-broke-it:blame-eval',
    ]);
    expect(parsed.find((x) => x.id === 'what-if')!.steps[0]).toMatchObject({ what_if: { intervene: 'role:designer', with: 'oracle' }, question: { truth: 'fix-saves' } });
    expect(parsed.find((x) => x.id === 'judge-blind-spot')!.steps[1]!.question).toMatchObject({ truth: 'blind-spot-rose', choices: [{ id: 'self' }, { id: 'verifier' }, { id: 'both' }, { id: 'neither' }] });
  });

  it('a "what if" step (truth fix-saves) needs its what_if, yes and no, and a blame-eval; what_if belongs to it alone', () => {
    const whatIf = `id: w
title: W
summary: One step.
steps:
  - id: fix
    title: Fix
    text: Think.
    run: { command: blame-eval, args: [examples/gsm8k-team.yaml] }
    what_if: { intervene: blamed, with: oracle }
    question: { prompt: Saved?, choices: [yes, no], truth: fix-saves }
    reveal: Maybe.
`;
    expect(parseScenario(whatIf, 'w.yaml').steps[0]!.what_if).toEqual({ intervene: 'blamed', with: 'oracle' });
    const issues = (text: string) => thrownBy(WorkshopError, () => parseScenario(text, 'w.yaml')).issues.map((i) => `${i.line}:${i.path}: ${i.message}`);
    expect(issues(whatIf.replace('    what_if: { intervene: blamed, with: oracle }\n', '').replace('[yes, no]', '[yes, maybe]').replace('command: blame-eval', 'command: rank'))).toEqual([
      '9:steps[0].question.choices: truth fix-saves needs the choice "no"',
      '5:steps[0]: truth fix-saves needs what_if: { intervene, with } (the node runs to fix, and with what)',
      '8:steps[0].run.command: truth fix-saves forks the runs of a blame-eval, not of rank',
    ]);
    expect(issues(whatIf.replace('truth: fix-saves', 'truth: blamed-role'))).toEqual(['9:steps[0].what_if: what_if belongs to truth fix-saves, not blamed-role']);
    expect(issues(whatIf.replace('intervene: blamed, with: oracle', 'intervene: solver, with: magic'))).toEqual([
      '9:steps[0].what_if.intervene: must be blamed, each-node or role:<role>',
      '9:steps[0].what_if.with: must be oracle or teacher=<model>',
    ]);
  });
});

describe('steps and scoring', () => {
  const ids = ['a', 'b', 'c'];
  it('moves between steps, restarting the timer, and refuses the ends', () => {
    let s = initialState(0);
    s = applyControl(s, { action: 'next' }, ids, 5000, () => true);
    expect(s).toMatchObject({ stepIndex: 1, startedAt: 5000, version: 2 });
    s = applyControl(s, { action: 'goto', index: 2 }, ids, 6000, () => true);
    expect(s.stepIndex).toBe(2);
    expect(thrownBy(WorkshopError, () => applyControl(s, { action: 'next' }, ids, 7000, () => true)).message).toBe('there is no step 4: the scenario has steps 1 to 3');
    expect(thrownBy(WorkshopError, () => applyControl(initialState(0), { action: 'prev' }, ids, 1, () => true)).code).toBe('BAD_REQUEST');
  });

  it('reveals once, only with a result; reset clears the reveals', () => {
    const s0 = initialState(0);
    expect(thrownBy(WorkshopError, () => applyControl(s0, { action: 'reveal' }, ids, 1, () => false)).code).toBe('WRONG_PHASE');
    const s1 = applyControl(s0, { action: 'reveal' }, ids, 1, () => true);
    expect(s1.revealed).toEqual(['a']);
    expect(thrownBy(WorkshopError, () => applyControl(s1, { action: 'reveal' }, ids, 2, () => true)).message).toMatch(/already revealed/);
    expect(applyControl(applyControl(s1, { action: 'next' }, ids, 3, () => true), { action: 'reset' }, ids, 9, () => true)).toEqual({ stepIndex: 0, startedAt: 9, revealed: [], version: 4 });
  });

  it('scores predictions against the truth, every choice listed', () => {
    expect(scorePredictions(['x', 'y', 'z'], [{ choice: 'x' }, { choice: 'y' }, { choice: 'x' }, { choice: 'q' }], 'x')).toEqual({ total: 4, correct: 2, share: 0.5, byChoice: { x: 2, y: 1, z: 0, q: 1 } });
    expect(scorePredictions(['x'], [], 'x').share).toBeNull();
    expect(secondsLeft({ startedAt: 0 }, 60, 15_500)).toBe(45);
    expect(secondsLeft({ startedAt: 0 }, 60, 99_000)).toBe(0);
  });
});

describe('truths', () => {
  it('blamed-role: the most common run verdict; cascades, silent runs and ambiguity counted', () => {
    const runs = [
      runRecord('e', 0, { correct: false, credit: credit({ roots: [root('plan', 'planner')], cascades: [{ nodeId: 'solve', status: 'cascade', roots: ['plan'] }] as CreditResult['cascades'] }) }),
      runRecord('e', 1, { correct: false, credit: credit({ roots: [root('plan', 'planner')] }) }),
      runRecord('e', 2, { correct: false, credit: credit({ silent: true }) }),
    ];
    const t = tallyBlame(runs);
    expect(t).toMatchObject({ runs: 3, wrong: 3, blamed: { planner: 2 }, cascades: 1, silent: 1, verdicts: { planner: 2, nobody: 1 }, execution: 2 });
    expect(blamedRoleTruth(t)).toBe('planner');
    const silent = tallyBlame([runs[2]!, runRecord('e', 3, { correct: false, credit: credit({ silent: true }) }), runs[0]!]);
    expect(blamedRoleTruth(silent)).toBe('nobody');
    const amb = tallyBlame([0, 1].map((i) => runRecord('e', i, { credit: credit({ roots: [root('calc', null, { candidates: ['planner', 'solver'] })] }) })));
    expect(amb).toMatchObject({ ambiguous: 2, candidates: { planner: 2, solver: 2 }, verdicts: { ambiguous: 2 } });
    expect(blamedRoleTruth(amb)).toBe('ambiguous');
    expect(blamedRoleTruth(tallyBlame([]))).toBe('nobody');
  });

  it('roles-learned: all, one role, or none, by a paired sign test at 0.05', () => {
    const h = (delta: number, p: number) => ({ before: 0, after: delta, delta, p, positive: 0, negative: 0, ties: 0, ci: { low: 0, high: 0 } });
    expect(rolesLearnedTruth({ planner: h(0.5, 1e-5), solver: h(0.2, 0.01) })).toBe('all');
    expect(rolesLearnedTruth({ planner: h(0.5, 1e-5), solver: h(0.2, 0.2) })).toBe('planner');
    expect(rolesLearnedTruth({ planner: h(-0.5, 1e-5), solver: h(0, 1) })).toBe('none');
  });

  it('fix-saves: runs saved by some tried fix, more than half of the runs a fix was tried on', () => {
    const t = (nodeId: string, role: string | null, flipped: boolean | null) => ({ nodeId, role, flipped });
    const runs = [
      { runId: 'e/0', trials: [t('design', 'designer', true)] },
      { runId: 'e/1', trials: [t('design', 'designer', false), t('a', 'executor', true)] },
      { runId: 'e/2', trials: [t('design', 'designer', false)] },
      { runId: 'e/3', trials: [t('plan', 'planner', null)] }, // no corrected output: not tried
    ];
    const tally = tallyWhatIf(runs);
    expect(tally).toEqual({ runs: 4, tried: 3, saved: 2, forks: 4, byRole: { designer: { tried: 3, flipped: 1 }, executor: { tried: 1, flipped: 1 } } });
    expect(fixSavesTruth(tally)).toBe('yes'); // 2 of 3
    expect(fixSavesTruth(tallyWhatIf(runs.slice(1)))).toBe('no'); // 1 of 2: not more than half
    expect(fixSavesTruth(tallyWhatIf([runs[3]!]))).toBe('no'); // none tried
  });

  it('blind-spot-kept: an arm\'s rate fell when its last cycle\'s Wilson interval lies wholly below the base\'s rate', () => {
    const p = (errors: number, n: number, interval: [number, number] | null) => ({ errors, n, rate: errors / n, interval });
    // Base 12/48 = 0.25. Verifier arm last cycle 2/48: Wilson 95% [0.0115, 0.1398] < 0.25: fell.
    // Self arm last cycle 9/48 = 0.1875: Wilson [0.1019, 0.3194], upper above 0.25: did not fall.
    const base = p(12, 48, [0.1492, 0.3878]);
    const verifier = { base, cycles: [p(8, 48, [0.0870, 0.2958]), p(2, 48, [0.0115, 0.1398])] };
    const self = { base, cycles: [p(11, 48, [0.1331, 0.3654]), p(9, 48, [0.1019, 0.3194])] };
    expect([blindSpotFell(verifier), blindSpotFell(self)]).toEqual([true, false]);
    expect(blindSpotKeptTruth({ self, verifier })).toBe('self');
    expect(blindSpotKeptTruth({ self: verifier, verifier: self })).toBe('verifier');
    expect(blindSpotKeptTruth({ self, verifier: self })).toBe('both');
    expect(blindSpotKeptTruth({ self: verifier, verifier })).toBe('neither');
    // An arm with no measured cycle did not fall.
    expect(blindSpotFell({ base, cycles: [] })).toBe(false);
    // Rose: the last interval wholly above the base's rate. From a base at 0/48, 22/48 (Wilson [0.3264, 0.5970]) rose;
    // 0/48 (lower bound a rounding error above 0) did not.
    const zero = p(0, 48, [1e-17, 0.0741]);
    const learned = { base: zero, cycles: [p(27, 48, [0.4228, 0.6930]), p(22, 48, [0.3264, 0.5970])] };
    const silent = { base: zero, cycles: [zero, zero] };
    expect([blindSpotRose(learned), blindSpotRose(silent), blindSpotRose(verifier)]).toEqual([true, false, false]);
    expect(blindSpotRoseTruth({ self: silent, verifier: learned })).toBe('verifier');
    expect(blindSpotRoseTruth({ self: learned, verifier: learned })).toBe('both');
    expect(blindSpotRoseTruth({ self: silent, verifier: silent })).toBe('neither');
    // From a base at 0 nothing falls: blind-spot-kept is `both` whatever happens (why the scenario asks blind-spot-rose).
    expect(blindSpotKeptTruth({ self: silent, verifier: learned })).toBe('both');
  });

  it('judge-prefers-tamperer: a win rate above one half', () => {
    const t = (winRate: number | null) => ({ runs: 8, quarantined: 8, judge: { wins: 0, losses: 0, ties: 0, winRate }, meanRank: 4, inCutBeforeGuard: 2 });
    expect(tampererTruth(t(0.56))).toBe('yes');
    expect(tampererTruth(t(0.5))).toBe('no');
    expect(tampererTruth(t(null))).toBe('no');
  });
});

describe('rehearse, room and live', () => {
  const scenario = (): Scenario => parseScenario(SCENARIO, 'demo.yaml');

  it('rehearses each step once; a room serves the recorded bytes and never runs a step', async () => {
    const store = stores.open();
    const runner = fakeRunner({ one: 'planner', two: 'yes' });
    expect(await rehearse(store, scenario(), runner)).toEqual({ ran: ['one', 'two'], reused: [] });
    expect(await rehearse(store, scenario(), runner)).toEqual({ ran: [], reused: ['one', 'two'] });
    expect(runner.calls).toEqual(['one', 'two']);
    const recorded = store.workshops.getResult(rehearsalSource(scenario()), 'one')!.json;

    let now = 10_000;
    const room = new WorkshopSession({ store, scenario: scenario(), mode: 'room', sessionId: 'ws-1', now: () => now, attendeeUrl: 'http://x/?token=a' });
    expect(room.view().steps.map((s) => s.ready)).toEqual([true, true]);
    expect(room.submit('alice', 'one', 'planner')).toEqual({ predictions: 1 });
    room.submit('bob', 'one', 'solver');
    room.submit('bob', 'one', 'nobody'); // changes bob's mind
    expect(room.view().step).toMatchObject({ predictions: 2, revealed: false, status: 'ready' });
    expect(room.view().step.reveal).toBeUndefined();
    now += 20_000;
    const v = room.control({ action: 'reveal' });
    expect(JSON.stringify(v.step.reveal!.result)).toBe(recorded); // byte-identical to the rehearsal
    expect(v.step.reveal).toMatchObject({ truthLabel: 'planner', text: 'The planner.', score: { total: 2, correct: 1, share: 0.5, byChoice: { planner: 1, solver: 0, nobody: 1 } } });
    expect(v.step.secondsLeft).toBe(100);
    expect(thrownBy(WorkshopError, () => room.submit('carol', 'one', 'planner')).code).toBe('WRONG_PHASE');
    expect(thrownBy(WorkshopError, () => room.submit('carol', 'two', 'yes')).message).toMatch(/not the current step/);
    room.control({ action: 'next' });
    expect(thrownBy(WorkshopError, () => room.submit('carol', 'two', 'maybe')).message).toMatch(/not a choice/);
    expect(thrownBy(WorkshopError, () => room.submit('c a', 'two', 'yes')).code).toBe('BAD_REQUEST');
    expect([...room.experimentIds()].sort()).toEqual(['exp-one', 'exp-two']);
    expect(runner.calls).toEqual(['one', 'two']); // the room ran nothing

    const html = workshopReportHtml(scenario(), room.id, room.reportSteps(), 0);
    expect(html).toContain('<td>planner ✓ truth</td><td>1</td>');
    expect(html).toContain('The room: 1 of 2 right (50%).');
    expect(html).not.toMatch(/<script/i);
    room.control({ action: 'reset' });
    expect(store.workshops.listPredictions('ws-1', 'one')).toEqual([]);
    expect(room.view().step).toMatchObject({ index: 0, revealed: false, predictions: 0 });
  });

  it('a room step without a rehearsal is missing and cannot be revealed', () => {
    const store = stores.open();
    const room = new WorkshopSession({ store, scenario: scenario(), mode: 'room', sessionId: 'ws-2' });
    expect(room.view().step.status).toBe('missing');
    expect(thrownBy(WorkshopError, () => room.control({ action: 'reveal' })).code).toBe('WRONG_PHASE');
  });

  it('live mode runs a step when it is opened, takes predictions while it runs, and records it for this session only', async () => {
    const store = stores.open();
    const g = gate();
    const calls: string[] = [];
    const runner: StepRunner = { run: async (step) => (calls.push(step.id), await g.wait, resultOf(step.id, step.id === 'one' ? 'solver' : 'no')) };
    const live = new WorkshopSession({ store, scenario: scenario(), mode: 'live', sessionId: 'ws-3', runner });
    expect(live.view().step.status).toBe('running');
    live.submit('alice', 'one', 'solver');
    expect(thrownBy(WorkshopError, () => live.control({ action: 'reveal' })).code).toBe('WRONG_PHASE');
    g.open();
    await live.settled();
    expect(live.view().step.status).toBe('ready');
    expect(live.control({ action: 'reveal' }).step.reveal!.score.correct).toBe(1);
    live.control({ action: 'next' });
    await live.settled();
    expect(calls).toEqual(['one', 'two']);
    expect(store.workshops.listResults(rehearsalSource(scenario()))).toEqual([]);
    expect(store.workshops.listResults('session:ws-3').map((r) => r.stepId)).toEqual(['one', 'two']);
  });

  it('a failed live step says why; a failed rehearsal keeps the steps before it', async () => {
    const store = stores.open();
    const runner: StepRunner = { run: async (step) => { if (step.id === 'two') throw new WorkshopError('STEP_FAILED', 'boom'); return resultOf(step.id, 'planner'); } };
    await rejectionOf(WorkshopError, rehearse(store, scenario(), runner));
    expect(store.workshops.listResults(rehearsalSource(scenario())).map((r) => r.stepId)).toEqual(['one']);
    const live = new WorkshopSession({ store, scenario: scenario(), mode: 'live', sessionId: 'ws-4', runner });
    await live.settled();
    live.control({ action: 'next' });
    await live.settled();
    expect(live.view().step).toMatchObject({ status: 'failed', problem: 'boom' });
  });

  it('draws charts as inline SVG', () => {
    expect(chartSvg({ kind: 'bars', title: 'B', unit: 'n', bars: [{ label: 'a', value: 2 }, { label: 'b', value: 1 }] })).toMatch(/^<svg[^>]*>.*<rect x="46.0" y="18.0" width="248.0" height="158.0"/);
    expect(chartSvg({ kind: 'lines', title: 'L', unit: 'h', x: 'iteration', series: [{ name: 'p', points: [0, 1] }] })).toContain('<polyline fill="none" stroke="#2b6cb0" stroke-width="2" points="40.0,176.0 550.0,18.0"/>');
  });
});
