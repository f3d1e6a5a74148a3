import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HINTS_HEADING } from '../core/engine/runNode.ts';
import { executePending } from '../core/experiments/index.ts';
import { ScriptedProvider } from '../core/model/scripted.ts';
import { computeWorkflowHash, openStore, type Card } from '../core/store/index.ts';
import { getDataset } from '../core/tasks/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { loadWorkflowFile } from '../core/workflow/index.ts';
import { cli, haveShared, shared, tinyModel } from '../test/cli.ts';
import type { Io } from './io.ts';
import { main } from './main.ts';

if (!haveShared) console.log(`[cards.test] skipping the hint-card test with the real tiny model: ${tinyModel} or the GSM8K data is absent (set FLOWLAB_SHARED)`);

function capture(): Io & { out: string; err: string } {
  const io = { out: '', err: '', isTTY: false, stdout: (s: string) => { io.out += s; }, stderr: (s: string) => { io.err += s; } };
  return io;
}
const tmp = () => mkdtempSync(path.join(tmpdir(), 'flowlab-cards-'));

function card(id: string, over: Partial<Card> = {}): Card {
  return {
    id, role: 'solver', title: `Title ${id}`, appliesWhen: 'a word problem', advice: 'Write one expression.', sourceRuns: ['exp-a/0', 'exp-a/3'],
    experimentId: 'exp-a', teacher: 'stories260K.gguf', shots: 2, onlySuccesses: true, simulated: false, createdAt: 1_700_000_000_123,
    meta: { provenance: { teacherRef: 'teacher', seed: 4, exemplars: [{ runId: 'exp-a/0', reward: 0.93 }] } }, ...over,
  };
}

describe('flowlab distill / cards: arguments', () => {
  it('bad arguments exit 2 with the usage', async () => {
    const dir = tmp();
    const db = path.join(dir, 'x.db');
    openStore(db).close();
    for (const [args, msg] of [
      [['distill', '--db', db], 'missing --experiment'],
      [['distill', '--experiment', 'e', '--db', db], 'missing --role'],
      [['distill', '--experiment', 'e', '--role', 'solver', '--shots', '0'], '--shots must be an integer >= 1'],
      [['cards'], 'missing a cards command'],
      [['cards', 'frob'], 'unknown cards command "frob"'],
      [['cards', 'show', '--db', db], 'cards show takes one <card-id>'],
      [['cards', 'list', '--bogus'], "Unknown option '--bogus'"],
      [['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--model', 'm.gguf', '--cards', 'card-nope', '--db', db], '--cards: no card card-nope'],
      [['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--model', 'm.gguf', '--distill-every', '0', '--db', db], '--distill-every must be an integer >= 1'],
      [['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--model', 'm.gguf', '--distill-every', '2', '--distill-roles', 'ghost', '--db', db], '--distill-roles names role(s) ghost'],
    ] as const) {
      const io = capture();
      expect(await main([...args], io), args.join(' ')).toBe(2);
      expect(io.err).toContain(msg);
      expect(io.err).toContain('Usage: flowlab');
    }
  });

  it('cards export / import round-trip unchanged through the CLI; import refuses duplicates; list, show, rm', async () => {
    const dir = tmp();
    const a = path.join(dir, 'a.db');
    const b = path.join(dir, 'b.db');
    const s = openStore(a);
    const cards = [card('card-20250101-000000-aaaa'), card('card-20250101-000000-bbbb', { role: 'planner', simulated: true, teacher: 'scripted (simulated)', experimentId: undefined, meta: undefined, createdAt: 5 })];
    for (const c of cards) s.improve.saveCard(c);
    s.close();

    let io = capture();
    const out = path.join(dir, 'cards.json');
    expect(await main(['cards', 'export', '--out', out, '--db', a], io), io.err).toBe(0);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    expect(doc.format).toBe('flowlab-cards');
    expect(doc.version).toBe(1);
    expect(doc.cards).toEqual([cards[1], cards[0]]); // listed by creation time

    io = capture();
    expect(await main(['cards', 'import', out, '--db', b], io), io.err).toBe(0);
    expect(io.err).toContain('Imported 2 card(s)');
    expect(io.err).toContain('1 SIMULATED');
    io = capture();
    expect(await main(['cards', 'export', '--db', b], io)).toBe(0);
    expect(JSON.parse(io.out).cards).toEqual(doc.cards); // unchanged, provenance included

    io = capture();
    expect(await main(['cards', 'import', out, '--db', b], io)).toBe(1);
    expect(io.err).toContain('already has card(s) card-20250101-000000-bbbb, card-20250101-000000-aaaa');
    expect(io.err).toContain('nothing imported');
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ format: 'flowlab-cards', version: 9, cards: [] }));
    io = capture();
    expect(await main(['cards', 'import', path.join(dir, 'bad.json'), '--db', b], io)).toBe(1);
    expect(io.err).toContain('version 9 is not supported');

    io = capture();
    expect(await main(['cards', 'export', 'card-20250101-000000-aaaa', '--db', b], io)).toBe(0);
    expect(JSON.parse(io.out).cards).toEqual([cards[0]]);

    io = capture();
    expect(await main(['cards', 'list', '--db', b], io)).toBe(0);
    expect(io.out).toMatch(/card-20250101-000000-bbbb.*planner.*SIMULATED/);
    expect(io.out).toMatch(/card-20250101-000000-aaaa.*solver/);
    io = capture();
    expect(await main(['cards', 'show', 'card-20250101-000000-bbbb', '--db', b], io)).toBe(0);
    expect(io.out).toContain('SIMULATED');
    io = capture();
    expect(await main(['cards', 'rm', 'card-20250101-000000-bbbb', '--db', b], io)).toBe(0);
    io = capture();
    expect(await main(['cards', 'show', 'card-20250101-000000-bbbb', '--db', b], io)).toBe(1);
    expect(io.err).toContain('no card card-20250101-000000-bbbb');
    io = capture();
    expect(await main(['cards', 'list', '--json', '--db', b], io)).toBe(0);
    expect(JSON.parse(io.out).map((c: Card) => c.id)).toEqual(['card-20250101-000000-aaaa']);
  });
});

describe('flowlab resume with hint cards', () => {
  it('refuses, before loading any model, when a card the experiment was run with has been removed', async () => {
    const dir = tmp();
    const db = path.join(dir, 'r.db');
    const store = openStore(db);
    const text = readFileSync('examples/gsm8k-single.yaml', 'utf8');
    const exp = store.createExperiment({
      kind: 'run', workflowName: 'gsm8k-single', workflowYaml: text, workflowHash: computeWorkflowHash(text), dataset: 'gsm8k', split: 'test', seed: 0,
      config: { models: { models: { default: path.resolve('package.json') }, roleModels: {}, gpu: false }, cards: { selection: ['card-gone'], ids: ['card-gone'], budgetTokens: 256 } },
      tasks: [{ taskIndex: 0, taskId: 'gsm8k/test/0', input: { question: 'What is 2 + 2?' }, expected: '4' }],
    });
    store.finishExperiment(exp.id, 'cancelled');
    store.close();
    const io = capture();
    expect(await main(['resume', exp.id, '--db', db], io)).toBe(1);
    expect(io.err).toContain('hint card(s) card-gone, chosen for experiment');
    expect(io.err).toContain('flowlab cards import');
  });
});

describe.skipIf(!haveShared)('hint cards with the real tiny model', () => {
  it('distil from SIMULATED successful trajectories with the tiny model as teacher; run --cards all injects the card; replay matches', { timeout: 60_000 }, async () => {
    const t0 = performance.now();
    const dir = tmp();
    const db = path.join(dir, 'cards.db');
    // 1. SIMULATED successes: gsm8k-team on 3 real GSM8K tasks, every role played by a scripted
    //    (simulated) model that knows the expected answers. Its calls are recorded with the model
    //    name "scripted (simulated)", which marks these trajectories simulated.
    const tools = defaultTools();
    const wf = loadWorkflowFile(path.resolve('examples/gsm8k-team.yaml'), { tools });
    const dataset = getDataset('gsm8k', { dataDir: path.join(shared, 'data') });
    const tasks = dataset.load({ split: 'test', limit: 3 });
    const store = openStore(db);
    const roles = Object.fromEntries([...wf.graph.roles.keys()].map((r) => [r, 'default']));
    const exp = store.createExperiment({
      kind: 'run', workflowName: wf.graph.name, workflowYaml: wf.text, workflowHash: computeWorkflowHash(wf.text), dataset: 'gsm8k', split: 'test', limit: 3, seed: 0,
      config: { simulated: true, note: 'SIMULATED successes: a scripted model knowing the answers', models: { models: { default: tinyModel }, roleModels: roles, gpu: false } },
      tasks: tasks.map((t, i) => ({ taskIndex: i, taskId: t.id, input: t.input, expected: t.expected })),
    });
    const answers = tasks.map((t) => t.expected);
    const simulated = new ScriptedProvider((r) => {
      const expected = answers[Number(r.key.taskKey)]!;
      if (r.role === 'planner') return 'Find the quantities, then combine them.';
      if (r.role === 'solver') return JSON.stringify({ expression: expected });
      if (r.role === 'verifier') return JSON.stringify({ verdict: 'ok', reason: 'the value answers the question' });
      return JSON.stringify({ answer: Number(expected) });
    });
    await executePending({ store, experimentId: exp.id, graph: wf.graph, grader: dataset.grader, provider: simulated, tools, seed: 0 });
    expect(store.listRuns(exp.id).filter((r) => r.correct)).toHaveLength(3);
    store.close();

    // 2. distill with the real tiny model as teacher (the role's model recorded in the experiment).
    const d = await cli(['distill', '--experiment', exp.id, '--role', 'solver', '--shots', '2', '--only-successes', '--db', db, '--json']);
    expect(d.code, d.err).toBe(0);
    const distilled = JSON.parse(d.out) as Card;
    expect(distilled).toMatchObject({ role: 'solver', teacher: 'stories260K.gguf', shots: 2, onlySuccesses: true, simulated: true, experimentId: exp.id, sourceRuns: [`${exp.id}/0`, `${exp.id}/1`] });
    expect(distilled.id).toMatch(/^card-\d{8}-\d{6}-[0-9a-z]{4}$/);
    expect(distilled.title.length).toBeGreaterThan(0);

    // 3. cards list shows it, marked SIMULATED.
    const list = await cli(['cards', 'list', '--db', db]);
    expect(list.code, list.err).toBe(0);
    expect(list.out).toMatch(new RegExp(`${distilled.id}.*solver.*SIMULATED`));

    // 4. run --cards all: the real model's solver prompts carry the card; uses are counted.
    const run = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '3', '--model', tinyModel, '--cards', 'all', '--db', db, '--json']);
    expect(run.code, run.err).toBe(0);
    expect(run.err).toContain('1 SIMULATED');
    const runExp = JSON.parse(run.out).experimentId as string;
    const s2 = openStore(db);
    expect((s2.getExperiment(runExp).config as { cards: unknown }).cards).toEqual({ selection: 'all', ids: [distilled.id], budgetTokens: 256 });
    const uses = s2.improve.usesOf(distilled.id);
    expect(uses.length).toBeGreaterThan(0);
    expect(s2.improve.getCard(distilled.id).uses).toBe(uses.length);
    const solverCalls = s2.getRunEvents(uses[0]!).flatMap((e) => e.calls).filter((c) => c.role === 'solver');
    expect(solverCalls[0]!.system).toContain(`${HINTS_HEADING}\n- ${distilled.title}`);
    s2.close();

    // 5. replay rebuilds the same hint text from the recorded uses: every node matches.
    const replay = await cli(['replay', runExp, '--db', db, '--json']);
    expect(replay.code, replay.err).toBe(0);
    expect(JSON.parse(replay.out).mismatched).toBe(0);

    // 6. the same tasks and seed without cards; compare prints the paired statistics (B - A).
    const plain = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '3', '--model', tinyModel, '--cards', 'none', '--db', db, '--json']);
    expect(plain.code, plain.err).toBe(0);
    const plainExp = JSON.parse(plain.out).experimentId as string;
    const cmp = await cli(['compare', plainExp, runExp, '--db', db]);
    expect(cmp.code, cmp.err).toBe(0);
    expect(cmp.out).toContain('3 paired task(s)');
    expect(cmp.out).toMatch(/score \(accuracy\)/);
    expect(cmp.out).toMatch(/95% bootstrap CI/);
    expect(cmp.out).toMatch(/h solver/);
    const cmpJson = JSON.parse((await cli(['compare', plainExp, runExp, '--db', db, '--json'])).out);
    expect(cmpJson).toMatchObject({ pairs: 3, seedsMatch: true });
    expect(cmpJson.score.signTest.positive + cmpJson.score.signTest.negative + cmpJson.score.signTest.ties).toBe(3);
    console.log(`[cards.test] tiny-model hint-card test: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  });
});
