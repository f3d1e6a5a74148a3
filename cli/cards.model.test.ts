import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HINTS_HEADING } from '../core/engine/runNode.ts';
import { executePending } from '../core/pipeline/index.ts';
import { ScriptedProvider } from '../core/model/scripted.ts';
import { computeWorkflowHash, openStore, type Card } from '../core/store/index.ts';
import { getDataset } from '../core/tasks/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { loadWorkflowFile } from '../core/workflow/index.ts';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, shared, tempDir, tinyModel } from '../test/fixtures.ts';

if (!haveShared) noteSkip('cards.model.test', 'the hint-card test with the real tiny model', `${tinyModel} or the GSM8K data`);
const tmp = () => tempDir('cards');

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
    expect(s2.getExperiment(runExp).config?.cards).toEqual({ selection: 'all', ids: [distilled.id], budgetTokens: 256 });
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
