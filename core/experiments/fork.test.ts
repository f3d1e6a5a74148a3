import { readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplayProvider } from '../../models/replay/index.ts';
import { scratchDir, REPO_ROOT } from '../../test/fixtures.ts';
import * as designed from './designedBlameEval.fixture.ts';
import type { GenerateRequest } from '../model/provider.ts';
import { ScriptedProvider, type Script } from '../model/scripted.ts';
import { openStore, type Store } from '../store/index.ts';
import type { Dataset } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/index.ts';
import { nodeSpanIdOf, runSpans, storedRuns, traceIdOf } from '../otel/index.ts';
import { ForkError, forkPlan, forkRun, parseNodeRef, reachableFrom, type ForkDeps } from './fork.ts';
import { startExperiment } from './service.ts';
import { parseMassDesign } from '../mass/design.ts';
import { massFamily } from '../mass/family.ts';
import { runMass } from '../mass/run.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import { storedWorkflowOptions } from './storedWorkflow.ts';
import { replayExperiment } from './replay.ts';

const TEAM = readFileSync(path.join(REPO_ROOT, 'examples/gsm8k-team.yaml'), 'utf8');
const tools = defaultTools();
const { graph: team } = parseWorkflow(TEAM, { tools });

/** A one-task dataset: "What is 2 plus 3?" -> 5, graded by numeric equality. */
const toy: Dataset = {
  name: 'toy',
  splits: ['test'],
  grader: { grade: (a, t) => ({ score: Number(a) === Number(t.expected) ? 1 : 0, correct: Number(a) === Number(t.expected), extracted: String(a), expected: t.expected }) },
  load: ({ limit }) => [{ id: 'toy/0', index: 0, input: { question: 'What is 2 plus 3?' }, expected: '5' }].slice(0, limit ?? 1),
};

/**
 * The SIMULATED team (a scripted model, not a real one): the solver always writes 2*3 (wrong), the
 * verifier asks for a revision unless the value is 5, the answerer states the value.
 */
const teamScript: Script = (r: GenerateRequest) => {
  if (r.role === 'planner') return 'add the two numbers';
  if (r.role === 'solver') return JSON.stringify({ expression: '2*3' });
  if (r.role === 'verifier') {
    const v = /= (.*)\n/.exec(r.prompt)?.[1];
    return JSON.stringify(v === '5' ? { verdict: 'ok', reason: 'right' } : { verdict: 'revise', reason: `got ${v}` });
  }
  return JSON.stringify({ answer: Number(/Value: (.*)\n/.exec(r.prompt)?.[1]) });
};

const dirs = scratchDir('fork');
const open: Store[] = [];
afterEach(() => { for (const s of open.splice(0)) s.close(); });

/** A stored `run` experiment of `wf` over `dataset` with the scripted model; returns the store, the run id and fork deps whose live model counts its calls. */
async function parentRun(wf: { graph: typeof team; text: string }, dataset: Dataset, script: Script, limit = 1) {
  const store = openStore(path.join(dirs(), 'f.db'));
  open.push(store);
  const models = { models: { default: '/m/sim.gguf' }, roleModels: Object.fromEntries([...wf.graph.roles.keys()].map((r) => [r, 'default'])), gpu: false as const };
  const handle = await startExperiment({ kind: 'run', workflow: wf, dataset: dataset.name, split: 'test', limit, seed: 3, models }, { store, models: { create: async () => new ScriptedProvider(script) }, tools: designedTools(wf), datasets: () => dataset });
  const outcome = await handle.done;
  expect(outcome.status).toBe('completed');
  const live: ScriptedProvider[] = [];
  const deps: ForkDeps = {
    store,
    tools: designedTools(wf),
    models: { create: async () => { const p = new ScriptedProvider(script); live.push(p); return p; } },
    datasets: () => dataset,
    replay: (calls, o) => new ReplayProvider(calls, o),
  };
  const liveCalls = () => live.reduce((n, p) => n + p.calls, 0);
  return { store, runId: `${outcome.experimentId}/0`, experimentId: outcome.experimentId, deps, liveCalls, live };
}
const designedTools = (wf: { text: string }) => (wf.text === designed.WF ? designed.tools : tools) as ForkDeps['tools'];

function snapshot(store: Store, runId: string) {
  return JSON.stringify({ run: store.getRun(runId), events: store.getRunEvents(runId), experiments: store.listExperiments().length });
}

describe('forkPlan and reachableFrom (pure)', () => {
  it('serves upstream and earlier loop attempts from the recording and runs the rest live', () => {
    expect([...reachableFrom(team, 'solve')].sort()).toEqual(['answer', 'calculate', 'solve', 'verify']);
    const ev = (nodeId: string, attempt: number, seq: number) => ({ nodeId, attempt, seq }) as never;
    const events = [ev('plan', 1, 0), ev('solve', 1, 1), ev('calculate', 1, 2), ev('verify', 1, 3), ev('solve', 2, 4), ev('calculate', 2, 5), ev('verify', 2, 6), ev('answer', 1, 7)];
    const side = forkPlan(team, events, 'solve', 2, 'output');
    expect(['plan@1', 'solve@1', 'calculate@1', 'verify@1', 'solve@2', 'calculate@2', 'verify@2', 'answer@1', 'solve@3'].map((k) => side(k.split('@')[0]!, Number(k.split('@')[1]))))
      .toEqual(['recorded', 'recorded', 'recorded', 'recorded', 'intervene', 'live', 'live', 'live', 'live']);
    // Forking at the verifier of attempt 1: the solver's first attempt was before it.
    const atVerify = forkPlan(team, events, 'verify', 1, 'seed');
    expect([atVerify('solve', 1), atVerify('verify', 1), atVerify('solve', 2), atVerify('plan', 1)]).toEqual(['recorded', 'live', 'live', 'recorded']);
  });

  it('parses node@attempt', () => {
    expect(parseNodeRef('solve@2')).toEqual({ nodeId: 'solve', attempt: 2 });
    expect(parseNodeRef('solve')).toEqual({ nodeId: 'solve' });
    expect(() => parseNodeRef('solve@x')).toThrow(/expected <node-id> or <node-id>@<attempt>/);
  });
});

describe('forkRun', () => {
  it('forks inside a loop attempt: 0 live calls upstream, only the node and what depends on it run live, linked and graded', async () => {
    const p = await parentRun({ graph: team, text: TEAM }, toy, teamScript);
    const parent = p.store.getRun(p.runId);
    expect(parent.correct).toBe(false); // 2*3 = 6 three times, then answered 6
    const attempts = p.store.getRunEvents(p.runId).map((e) => `${e.nodeId}@${e.attempt}`);
    expect(attempts).toEqual(['plan@1', 'solve@1', 'calculate@1', 'verify@1', 'solve@2', 'calculate@2', 'verify@2', 'solve@3', 'calculate@3', 'verify@3', 'answer@1']);
    const before = snapshot(p.store, p.runId);

    const out = await forkRun({ parentRunId: p.runId, nodeId: 'solve', attempt: 2, intervention: { kind: 'output', output: '{"expression":"2+3"}' } }, p.deps);
    // Upstream (plan@1, solve@1, verify@1) came from the recording; the live model answered only verify@2 and answer@1.
    expect(out.calls).toEqual({ recorded: { plan: 1, solve: 1, verify: 1 }, intervened: 1, live: { verify: 1, answer: 1 } });
    expect(p.liveCalls()).toBe(2);
    expect(out.run.correct).toBe(true);
    expect(out.run.answer).toBe('5');
    expect(out.events.map((e) => `${e.nodeId}@${e.attempt}`)).toEqual(['plan@1', 'solve@1', 'calculate@1', 'verify@1', 'solve@2', 'calculate@2', 'verify@2', 'answer@1']);
    expect(out.link).toMatchObject({ parentRunId: p.runId, nodeId: 'solve', attempt: 2, intervention: { kind: 'output', output: '{"expression":"2+3"}' } });
    expect(p.store.forks.forksOf(p.runId).map((l) => l.runId)).toEqual([out.run.runId]);
    expect(p.store.forks.linkOf(out.run.runId)?.parentRunId).toBe(p.runId);
    const stored = p.store.getRun(out.run.runId);
    expect(stored.credit?.roots).toEqual([]);
    expect(stored.ladder?.solver).toBeDefined();
    expect(p.store.getExperiment(out.link!.experimentId)).toMatchObject({ kind: 'fork', status: 'completed' });
    // Exported as OpenTelemetry spans, the fork's root span links to the parent's span of solve@2.
    const { experiment, runs } = storedRuns(p.store, out.link!.experimentId, tools);
    const [rootSpan] = runSpans(experiment, runs);
    expect(rootSpan!.links).toEqual([{ context: { traceId: traceIdOf(p.runId), spanId: nodeSpanIdOf(p.runId, 'solve', 2), traceFlags: 1 }, attributes: { 'flowlab.fork.parent_run_id': p.runId, 'flowlab.fork.node_id': 'solve', 'flowlab.fork.attempt': 2, 'flowlab.fork.intervention': 'output' } }]);
    expect(snapshot(p.store, p.runId)).not.toBe(before); // one experiment more ...
    expect(JSON.stringify({ run: p.store.getRun(p.runId), events: p.store.getRunEvents(p.runId) })).toBe(JSON.stringify({ run: JSON.parse(before).run, events: JSON.parse(before).events })); // ... the parent unchanged
  });

  it('replaces a tool node\'s result: the calculator returns the given value, the verifier and answerer run on it', async () => {
    const p = await parentRun({ graph: team, text: TEAM }, toy, teamScript);
    const out = await forkRun({ parentRunId: p.runId, nodeId: 'calculate', intervention: { kind: 'output', output: '{"value":5,"expression":"2*3"}' } }, p.deps, { save: false });
    expect(out.events.find((e) => e.nodeId === 'calculate')!.output).toEqual({ value: 5, expression: '2*3' });
    expect(out.calls).toEqual({ recorded: { plan: 1, solve: 1 }, intervened: 0, live: { verify: 1, answer: 1 } });
    expect([out.run.answer, out.run.correct]).toEqual(['5', true]);
  });

  it('a tool node\'s replaced output that breaks the tool\'s output schema is that node\'s recorded failure, not its reader\'s; the parent unchanged', async () => {
    const p = await parentRun({ graph: team, text: TEAM }, toy, teamScript);
    const before = snapshot(p.store, p.runId);
    // The calculator declares {value: number, expression: string}, no other field (core/tools/calculator.ts).
    for (const output of ['{"nope":1}', 'plain text', '{"value":"five","expression":"2+3"}']) {
      const out = await forkRun({ parentRunId: p.runId, nodeId: 'calculate', intervention: { kind: 'output', output } }, p.deps, { save: false });
      const calc = out.events.find((e) => e.nodeId === 'calculate')!;
      expect([calc.status, calc.failureClass, calc.errorCode], output).toEqual(['failed', 'execution', 'CONTRACT_VIOLATION']);
      expect(calc.message).toMatch(/the fork's output for tool node calculate breaks the calculator tool's output schema/);
      // The verifier never read the bad value: it is a cascade, and the blame is the tool node's (the solver's role).
      expect(out.events.find((e) => e.nodeId === 'verify')!.status).toBe('cascade');
      expect(out.run.credit?.roots.map((r) => `${r.nodeId}:${r.blamed}`)).toEqual(['calculate:solver']);
      expect(out.calls).toEqual({ recorded: { plan: 1, solve: 1 }, intervened: 0, live: {} });
    }
    expect(p.liveCalls()).toBe(0);
    expect(snapshot(p.store, p.runId)).toBe(before);
  });

  it('forks at the first attempt with the default attempt; a seed fork re-runs everything from the node', async () => {
    const p = await parentRun({ graph: team, text: TEAM }, toy, teamScript);
    const out = await forkRun({ parentRunId: p.runId, nodeId: 'verify', intervention: { kind: 'seed', seed: 99 } }, p.deps, { save: false });
    expect(out.attempt).toBe(1);
    expect(out.calls.recorded).toEqual({ plan: 1, solve: 1 });
    expect(out.calls.live).toEqual({ verify: 3, solve: 2, answer: 1 });
    expect(out.run.seed).toBe(99);
    expect(p.store.forks.forksOf(p.runId)).toEqual([]);
  });

  it('an edited downstream graph runs from the node; an edit upstream is refused; another model or adapter for a role reaches the live config', async () => {
    const p = await parentRun({ graph: team, text: TEAM }, toy, teamScript);
    // The answerer's prompt edited (downstream of verify): the fork at verify@3 re-runs verify and the answerer only.
    const edited = TEAM.replace('Final answer as JSON:', 'The final answer, as JSON:');
    const out = await forkRun({ parentRunId: p.runId, nodeId: 'verify', attempt: 3, intervention: { kind: 'workflow', text: edited } }, p.deps, { save: false });
    expect(out.calls).toEqual({ recorded: { plan: 1, solve: 3, verify: 2 }, intervened: 0, live: { verify: 1, answer: 1 } });
    expect(out.events.find((e) => e.nodeId === 'answer')!.calls[0]!.prompt).toMatch(/The final answer, as JSON:/);
    // An edit of the planner's prompt (upstream) cannot be served from the recording.
    const upstream = TEAM.replace('Plan:', 'Your plan:');
    const err = await forkRun({ parentRunId: p.runId, nodeId: 'verify', attempt: 3, intervention: { kind: 'workflow', text: upstream } }, p.deps).catch((e: unknown) => e as ForkError);
    expect(err).toBeInstanceOf(ForkError);
    expect((err as ForkError).code).toBe('RECORDING_MISMATCH');
    expect((err as ForkError).message).toMatch(/node plan attempt 1 call 0: prompt differs/);
    // Another model file and a LoRA adapter for the verifier: the live provider is built with them.
    const configs: unknown[] = [];
    const deps = { ...p.deps, models: { create: async (c: unknown) => { configs.push(c); return new ScriptedProvider(teamScript); } } };
    await forkRun({ parentRunId: p.runId, nodeId: 'verify', intervention: { kind: 'role-model', role: 'verifier', model: '/m/other.gguf' } }, deps, { save: false });
    await forkRun({ parentRunId: p.runId, nodeId: 'verify', intervention: { kind: 'role-lora', role: 'verifier', lora: { path: '/m/a.gguf', scale: 0.5 } } }, deps, { save: false });
    expect(configs[0]).toMatchObject({ models: { default: '/m/sim.gguf', 'fork:verifier': '/m/other.gguf' }, roleModels: { verifier: 'fork:verifier', solver: 'default' } });
    expect(configs[1]).toMatchObject({ models: { 'fork:verifier': '/m/sim.gguf' }, roleModels: { verifier: 'fork:verifier' }, loras: { 'fork:verifier': [{ path: '/m/a.gguf', scale: 0.5 }] } });
  });

  it('a prompt fork edits the node\'s template in the stored workflow text, and replays without a model', async () => {
    const p = await parentRun({ graph: team, text: TEAM }, toy, teamScript);
    const prompt = 'Question: {{question}}\nCheck {{expression}} = {{value}}.\nVerdict as JSON:\n';
    const out = await forkRun({ parentRunId: p.runId, nodeId: 'verify', intervention: { kind: 'prompt', prompt } }, p.deps);
    expect(out.calls.recorded).toEqual({ plan: 1, solve: 1 });
    expect(out.events.find((e) => e.nodeId === 'verify')!.calls[0]!.prompt).toBe('Question: What is 2 plus 3?\nCheck 2*3 = 6.\nVerdict as JSON:\n');
    const exp = p.store.getExperiment(out.link!.experimentId);
    const { graph } = parseWorkflow(exp.workflowYaml, { tools });
    expect(graph.nodes.find((n) => n.id === 'verify')!.prompt).toBe(prompt);
    expect(graph.nodes.find((n) => n.id === 'solve')!.prompt).toBe(team.nodes.find((n) => n.id === 'solve')!.prompt);
    expect(exp.workflowYaml).toContain('# A four-role team on GSM8K'); // comments kept
    const report = await replayExperiment({ store: p.store, experimentId: exp.id, graph, provider: new ReplayProvider(p.store.getExperimentCalls(exp.id)), tools });
    expect(report).toMatchObject({ runs: 1, mismatched: 0, modelsLoaded: 0 });
    expect(report.nodes).toBe(out.events.length);
    // A prompt is an agent's: a tool node has none.
    await expect(forkRun({ parentRunId: p.runId, nodeId: 'calculate', intervention: { kind: 'prompt', prompt } }, p.deps)).rejects.toMatchObject({ code: 'BAD_INTERVENTION' });
  });

  it('forks inside a designer-generated graph at the exact node: the design is served from the recording', async () => {
    const p = await parentRun({ graph: designed.graph, text: designed.WF }, designed.dataset, designed.script);
    // Task 0 is "Will it rain tomorrow?": design -> a (day_args skill) -> b (weather tool) -> report.
    expect(p.store.getRunEvents(p.runId).map((e) => e.nodeId)).toEqual(['design', 'a', 'b', 'report']);
    const out = await forkRun({ parentRunId: p.runId, nodeId: 'a', intervention: { kind: 'output', output: '"today"' } }, p.deps);
    expect(out.calls).toEqual({ recorded: { design: 1 }, intervened: 1, live: { report: 1 } });
    expect(p.liveCalls()).toBe(1);
    expect(out.events.find((e) => e.nodeId === 'b')?.output).toBe('weather:today');
    expect(out.run.correct).toBe(false);
    // Forking at the design node re-runs every designed node live.
    const atDesign = await forkRun({ parentRunId: p.runId, nodeId: 'design', intervention: { kind: 'seed', seed: 1 } }, p.deps, { save: false });
    expect(atDesign.calls).toEqual({ recorded: {}, intervened: 0, live: { design: 1, a: 1, report: 1 } });
  });

  it('forks inside a MASS hop at the exact node: the orchestrator is served from the recording, the hop gets the output, the later hop and the answer run live; it replays', async () => {
    const family = massFamily('learn-tool');
    const task = createLearnDataset('learn-tool', ['tool']).load({ split: 'train', limit: 1 })[0]!;
    expect([task.input.request, task.expected]).toEqual(['Find facts about the tiger.', 'search']);
    const parsed = parseMassDesign(
      { agents: [{ agent_id: 'picker', role: 'Tool picker', instruction: 'Name the tool.', contract: { fields: ['tool'], artefacts: ['note'], checks: ['names_a_tool'] } }, { agent_id: 'checker', role: 'Checker', instruction: 'Check it.' }], hops: ['picker', { agent_id: 'checker', reads: ['picker'] }] },
      { checks: family.checks.names() },
    );
    if (!parsed.ok) throw new Error('the design must parse');
    /** SIMULATED team (scripted): the picker names `weather` (a listed tool, so its named check passes, but wrong); the orchestrator answers what the picker said. */
    const script: Script = (r) => {
      if (r.key.nodeId === 'orchestrator') return 'ask the picker';
      if (r.key.nodeId === 'h1_picker') return JSON.stringify({ tool: 'weather', note: 'n' });
      if (r.key.nodeId === 'h2_checker') return '{"reply":"agreed"}';
      return JSON.stringify(/picker: \{"tool":"(\w+)"/.exec(r.prompt)?.[1] ?? 'calculator');
    };
    const store = openStore(path.join(dirs(), 'mass.db'));
    open.push(store);
    const models = { models: { default: '/m/sim.gguf' }, roleModels: {}, gpu: false as const };
    const ws = await runMass(parsed.design, task, { provider: new ScriptedProvider(script), family, store, config: { models } }, { experimentId: 'mass-step', version: 1 });
    expect([ws.answer, ws.grade.correct]).toEqual(['weather', false]);
    expect(store.getRunEvents('mass-step/0').map((e) => `${e.nodeId}@${e.attempt}`)).toEqual(['orchestrator@1', 'h1_picker@1', 'h2_checker@1', 'answer@1']);
    const before = snapshot(store, 'mass-step/0');
    const live: ScriptedProvider[] = [];
    const deps: ForkDeps = { store, tools, models: { create: async () => { const p = new ScriptedProvider(script); live.push(p); return p; } }, replay: (calls, o) => new ReplayProvider(calls, o) };

    const out = await forkRun({ parentRunId: 'mass-step/0', nodeId: 'h1_picker', intervention: { kind: 'output', output: '{"tool":"search","note":"n"}' } }, deps);
    expect(out.calls).toEqual({ recorded: { orchestrator: 1 }, intervened: 1, live: { h2_checker: 1, answer: 1 } });
    expect(live.reduce((n, p) => n + p.calls, 0)).toBe(2);
    expect([out.run.answer, out.run.correct]).toEqual(['search', true]);
    // The hop's named check (a MASS check) holds the fork's output to the hop's contract, too.
    const broken = await forkRun({ parentRunId: 'mass-step/0', nodeId: 'h1_picker', intervention: { kind: 'output', output: '{"tool":"hammer","note":"n"}' } }, deps, { save: false });
    expect(broken.events.find((e) => e.nodeId === 'h1_picker')).toMatchObject({ status: 'failed', errorCode: 'CONTRACT_VIOLATION', message: expect.stringContaining('check names_a_tool failed') });
    expect(snapshot(store, 'mass-step/0')).toBe(before.replace('"experiments":1', '"experiments":2'));
    // The fork replays from its own recording without a model, parsed as its MASS parent was.
    const exp = store.getExperiment(out.link!.experimentId);
    const opts = storedWorkflowOptions(exp.config, tools);
    const { graph } = parseWorkflow(exp.workflowYaml, opts);
    const report = await replayExperiment({ store, experimentId: exp.id, graph, provider: new ReplayProvider(store.getExperimentCalls(exp.id)), tools: opts.tools, checks: opts.checks });
    expect(report).toMatchObject({ runs: 1, mismatched: 0, modelsLoaded: 0 });
  });

  it('an incomplete recording with a node run missing before the fork node run is refused, not run live in its place; nothing stored', async () => {
    const p = await parentRun({ graph: team, text: TEAM }, toy, teamScript);
    expect(p.store.getRunEvents(p.runId).map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // verify@1 (seq 3) lost from the recording: it ran before solve@2, so a fork there cannot serve it.
    const db = new Database(p.store.file);
    const id = db.prepare(`SELECT id FROM node_events WHERE run_id = ? AND node_id = 'verify' AND attempt = 1`).pluck().get(p.runId);
    db.prepare('DELETE FROM model_calls WHERE node_event_id = ?').run(id);
    db.prepare('DELETE FROM node_events WHERE id = ?').run(id);
    db.close();
    const n = p.store.listExperiments().length;
    const err = (await forkRun({ parentRunId: p.runId, nodeId: 'solve', attempt: 2, intervention: { kind: 'output', output: '{"expression":"2+3"}' } }, p.deps).then(() => undefined, (e: unknown) => e)) as ForkError;
    expect(err).toBeInstanceOf(ForkError);
    expect([err.code, err.field]).toEqual(['INCOMPLETE_RECORDING', 'run']);
    expect(err.message).toMatch(/node runs are missing from the recording \(seq 3 of 0\.\.10\)/);
    expect(p.liveCalls()).toBe(0);
    expect(p.store.listExperiments().length).toBe(n);
  });

  it('an output at the fork node run replaces it whole: a SIMULATED fault planned there (a design fault, an agent\'s execution fault) is neither applied nor marked', async () => {
    // Every design gets a dangling edge and every executor completion breaks its contract (SIMULATED, rate 1).
    const store = openStore(path.join(dirs(), 'faults.db'));
    open.push(store);
    const spec = { kind: 'blame-eval' as const, workflow: { graph: designed.graph, text: designed.WF }, dataset: 'designed', split: 'test', limit: 1, seed: 17, models: designed.MODELS, inject: ['designer=dangling_edge@1', 'executor=contract@1'] };
    const port = { create: async () => new ScriptedProvider(designed.script) };
    const outcome = await (await startExperiment(spec, { store, models: port, tools: designed.tools, datasets: () => designed.dataset })).done;
    const runId = `${outcome.experimentId}/0`;
    expect(store.getRunEvents(runId).filter((e) => e.fault).map((e) => `${e.nodeId}:${e.fault}`)).toEqual(['design:design:dangling_edge', 'a:contract']);
    const deps: ForkDeps = { store, tools: designed.tools as ForkDeps['tools'], models: port, datasets: () => designed.dataset, replay: (calls, o) => new ReplayProvider(calls, o) };
    // The right design for "Will it rain tomorrow?" given as the design node's output.
    const atDesign = await forkRun({ parentRunId: runId, nodeId: 'design', intervention: { kind: 'output', output: JSON.stringify(designed.DESIGNS.weather) } }, deps, { save: false });
    const design = atDesign.events.find((e) => e.nodeId === 'design')!;
    expect([design.status, design.fault]).toEqual(['ok', undefined]);
    // Below it the executor's skill still meets its own SIMULATED contract fault (it stays where the seed put it).
    expect(atDesign.events.filter((e) => e.fault).map((e) => `${e.nodeId}:${e.fault}:${e.status}`)).toEqual(['a:contract:failed']);
    // Forking at that skill with its right output: no fault there either, and the run is right.
    const parentOk = await forkRun({ parentRunId: runId, nodeId: 'design', intervention: { kind: 'unfault' } }, deps);
    const atSkill = await forkRun({ parentRunId: parentOk.run.runId, nodeId: 'a', intervention: { kind: 'output', output: '"tomorrow"' } }, deps, { save: false });
    expect(atSkill.events.find((e) => e.nodeId === 'a')).toMatchObject({ status: 'ok', output: 'tomorrow' });
    expect(atSkill.events.find((e) => e.nodeId === 'a')!.fault).toBeUndefined();
    expect(atSkill.events.filter((e) => e.fault).map((e) => e.nodeId)).toEqual(['report']);
  });

  it('bad input: unknown run and node, a node that never ran, a contract-breaking output, an incomplete recording; the parent unchanged', async () => {
    const cascade: Script = (r) => (r.role === 'solver' ? '{"expression":"no number"}' : teamScript(r));
    const p = await parentRun({ graph: team, text: TEAM }, toy, cascade);
    const before = snapshot(p.store, p.runId);
    const code = async (spec: Parameters<typeof forkRun>[0]) => (await forkRun(spec, p.deps).then(() => undefined, (e: unknown) => e)) as ForkError;
    const out = { kind: 'output' as const, output: '{"expression":"2+3"}' };
    expect((await code({ parentRunId: 'nope/0', nodeId: 'solve', intervention: out })).code).toBe('UNKNOWN_RUN');
    const unknown = await code({ parentRunId: p.runId, nodeId: 'solver', intervention: out });
    expect(unknown).toBeInstanceOf(ForkError);
    expect(unknown.code).toBe('UNKNOWN_NODE');
    expect(unknown.message).toMatch(/no node "solver" \(its nodes: plan, solve, calculate, verify, answer\)/);
    const never = await code({ parentRunId: p.runId, nodeId: 'calculate', intervention: out });
    expect(never.code).toBe('NEVER_RAN');
    expect(never.message).toMatch(/recorded only as cascade@1/);
    expect((await code({ parentRunId: p.runId, nodeId: 'solve', attempt: 4, intervention: out })).code).toBe('UNKNOWN_ATTEMPT');
    expect((await code({ parentRunId: p.runId, nodeId: 'solve', intervention: { kind: 'unfault' } })).code).toBe('BAD_INTERVENTION');
    expect(snapshot(p.store, p.runId)).toBe(before);

    // An output that breaks the solver's contract is the fork's recorded failure, blamed on the solver.
    const broken = await forkRun({ parentRunId: p.runId, nodeId: 'solve', intervention: { kind: 'output', output: '{"expr":1}' } }, p.deps);
    const ev = broken.events.find((e) => e.nodeId === 'solve')!;
    expect([ev.status, ev.errorCode]).toEqual(['failed', 'CONTRACT_VIOLATION']);
    expect(broken.run.credit?.roots.map((r) => r.nodeId)).toEqual(['solve']);
    expect(JSON.stringify({ run: p.store.getRun(p.runId), events: p.store.getRunEvents(p.runId) })).toBe(JSON.stringify({ run: JSON.parse(before).run, events: JSON.parse(before).events }));

    // An incomplete recording: the planner's calls are gone.
    const db = new Database(p.store.file);
    db.prepare(`DELETE FROM model_calls WHERE node_event_id IN (SELECT id FROM node_events WHERE run_id = ? AND node_id = 'plan')`).run(p.runId);
    db.close();
    const n = p.store.listExperiments().length;
    const incomplete = await code({ parentRunId: p.runId, nodeId: 'solve', intervention: out });
    expect(incomplete.code).toBe('INCOMPLETE_RECORDING');
    expect(incomplete.message).toMatch(/plan@1 ended ok but has no recorded model call/);
    expect(p.store.listExperiments().length).toBe(n);
  });
});
