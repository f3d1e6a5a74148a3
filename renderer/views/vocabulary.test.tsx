/**
 * Issue 29 part 4, one vocabulary with the CLI: the views rendered in Node over one database, each
 * label checked against what `flowlab ls` / `flowlab show` print (table and `--json`) for the same
 * file (test/vocabulary.fixture.ts: a blame-eval on two model files; a rollouts experiment of
 * 2 tasks × G = 2; a run with one failed run; SIMULATED records, no model).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import type { RunHit, Store } from '../../core/store/index.ts';
import { capture, tempDir } from '../../test/fixtures.ts';
import { seedVocabulary } from '../../test/vocabulary.fixture.ts';
import { ExperimentsView } from './ExperimentsView.tsx';
import { LadderView } from './LadderView.tsx';
import { RolloutsView } from './RolloutsView.tsx';
import { TraceView } from './TraceView.tsx';
import { JobsList } from './JobsMenu.tsx';
import { MassView } from './MassView.tsx';
import { evolve } from '../../core/mass/inner.ts';
import { scripted, spec } from '../../core/mass/loop.fixture.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { TrainLoopPanel } from './TrainLoopPanel.tsx';
import { closeViewStores, renderView, scriptedLab, storeLab } from './viewTest.fixture.tsx';

afterEach(closeViewStores);

// A workflow that compiles (`flowlab show <run>` draws the run on it).
const fill = (s: Store) => void seedVocabulary(s);

async function cli(file: string, ...args: string[]): Promise<string> {
  const io = capture();
  expect(await main([...args, '--db', file], io), io.err).toBe(0);
  return io.out;
}

const text = (html: string, testId: string) => {
  // The element's text up to its own closing tag (none of these nests an element of its own tag).
  const m = new RegExp(`<(\\w+)[^>]*data-testid="${testId}"[^>]*>(.*?)</\\1>`, 's').exec(html);
  if (!m) throw new Error(`no ${testId} in the view`);
  return m[2]!.replace(/<[^>]+>/g, '').replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim();
};

async function lab() {
  const file = path.join(tempDir('vocabulary'), 'lab.db');
  const l = await storeLab(fill, file);
  await l.getState().refresh();
  return { file, l };
}

describe('the views name kinds, tasks, outcomes and models as the CLI does', () => {
  it('Experiments: a blame-eval is "blame-eval (SIMULATED faults)" and each model column is `ls`\'s', async () => {
    const { file, l } = await lab();
    const html = renderView(l, <ExperimentsView />);
    const table = await cli(file, 'ls');
    expect(table).toContain('blame-eval (SIMULATED faults)');
    expect(text(html, 'experiment-kind-exp-blame')).toBe('blame-eval (SIMULATED faults)');
    await l.getState().openBlameEval('exp-blame');
    expect(text(renderView(l, <ExperimentsView />), 'blame-eval-models')).toBe('models judge.gguf, tiny.gguf');
    expect(text(html, 'experiment-kind-exp-roll')).toBe('rollouts');
    const json = JSON.parse(await cli(file, 'ls', '--json')) as { rows: Array<{ id: string; models: string[] }> };
    for (const e of json.rows) expect(text(html, `experiment-model-${e.id}`)).toBe(e.models.join(', '));
    expect(json.rows.find((e) => e.id === 'exp-blame')!.models).toEqual(['judge.gguf', 'tiny.gguf']);
  });

  it('Trace: a rollout\'s task is `task/rollout` as `ls` prints it, with its status, grade and the experiment\'s models', async () => {
    const { file, l } = await lab();
    const runs = JSON.parse(await cli(file, 'ls', 'exp-roll', '--json')) as { rows: RunHit[] };
    const hit = runs.rows.find((r) => r.taskIndex === 3)!;
    expect(hit.rollout).toEqual({ task: 1, index: 1 });
    expect(await cli(file, 'ls', 'exp-roll')).toMatch(/│ 1\/1 +│ exp-roll-r3 │/);
    await l.getState().selectExperiment('exp-roll');
    await l.getState().selectRun('exp-roll-r3');
    const html = renderView(l, <TraceView />);
    expect(text(html, 'trace-task')).toBe('Task 1/1 gsm8k/1#r1');
    expect(text(html, 'run-task-3')).toBe('1/1');
    const show = JSON.parse(await cli(file, 'show', 'exp-roll', '--json')) as { kind: string; models: string[] };
    expect(text(html, 'trace-experiment')).toBe(`${show.kind} · workflow gsm8k-single · dataset gsm8k/test · models ${show.models.join(', ')}`);
    expect(text(html, 'picked-experiment')).toContain('rollouts · gsm8k/test · models tiny.gguf · 4/4 runs');
  });

  it('Ladder: a failed run reads "failed · wrong", as `flowlab show` prints its status and grade', async () => {
    const { file, l } = await lab();
    const shown = await cli(file, 'show', 'exp-run-r0');
    expect(shown.split('\n')[0]).toMatch(/^Run exp-run-r0 {2}task t0 {2}failed {2}answer - {2}expected 4 {2}wrong$/);
    await l.getState().selectExperiment('exp-run');
    await l.getState().selectRun('exp-run-r0');
    const html = renderView(l, <LadderView />);
    expect(text(html, 'ladder-run-title')).toBe('Run exp-run-r0 · task 0 · failed · wrong');
    expect(text(html, 'ladder-experiment')).toBe('run · workflow gsm8k-single · dataset gsm8k/test · models tiny.gguf');
  });

  it('Rollouts: groups are numbered by task as `ls` numbers them (0-based), and the models are shown', async () => {
    const { l } = await lab();
    await l.getState().selectRolloutsExperiment('exp-roll');
    const html = renderView(l, <RolloutsView />);
    expect(html).toContain('data-testid="rollouts-group-1"');
    expect(text(html, 'rollouts-group-1')).toMatch(/^task 1 gsm8k\/1 · 1\/2 ✓/);
    expect(text(html, 'rollouts-models')).toBe('models tiny.gguf');
  });

  it('Compare: each side names its models, as `ls` prints them', async () => {
    const { file, l } = await lab();
    const cmp = JSON.parse(await cli(file, 'compare', 'exp-blame', 'exp-run', '--json')) as { pairs: number };
    expect(cmp.pairs).toBe(1);
    l.getState().setCompareIds({ a: 'exp-blame', b: 'exp-run' });
    await l.getState().runCompare();
    const html = renderView(l, <ExperimentsView />);
    expect(text(html, 'compare-result')).toMatch(/^A = exp-blame \(gsm8k-single, gsm8k test, models judge\.gguf, tiny\.gguf\), B = exp-run \(gsm8k-single, gsm8k test, models tiny\.gguf\): 1 paired task/);
  });

  it('Learning: opening a workflow picks the dataset its train-loop line names, not the form\'s learn-word', async () => {
    const example = { file: 'examples/workshop-learn.yaml', name: 'workshop-learn', text: readFileSync(new URL('../../examples/workshop-learn.yaml', import.meta.url), 'utf8') };
    const splits = ['train', 'heldout'];
    const l = scriptedLab(() => ({
      listExamples: () => [example],
      listDatasets: () => ['learn-design', 'learn-team', 'learn-word'].map((name) => ({ name, splits, describe: '', available: true })),
    }));
    await l.getState().loadCatalog();
    expect(l.getState().trainLoopForm.dataset).toBe('learn-word');
    l.getState().openExample(example);
    expect(l.getState().trainLoopForm.dataset).toBe('learn-team');
    expect(renderView(l, <TrainLoopPanel />)).toMatch(/data-testid="loop-dataset"[^>]*>.*?<option value="learn-team" selected="">/s);
  });

  it('Jobs: a running blame-eval is named as `ls` names its experiment', async () => {
    const l = scriptedLab(() => ({ listJobs: () => [{ kind: 'blame-eval', id: 'exp-b', status: 'running', done: 0, total: 2, startedAt: 1 }] }));
    await l.getState().loadJobs();
    expect(renderView(l, <JobsList />)).toContain('<strong>blame-eval (SIMULATED faults)</strong> <code>exp-b</code>');
  });

  it('MASS: an evolution names the model its steps ran, as `flowlab evolve` records it on each step', async () => {
    const config = { models: { models: { default: '/m/tiny.gguf' } } };
    const l = await storeLab((s) => evolve({ ...spec('evo-m'), tasks: spec('evo-m').tasks.slice(0, 1), iterations: 1 }, { store: s, provider: scripted(), tools: defaultTools(), config }));
    await l.getState().refresh();
    await l.getState().loadMass();
    const html = renderView(l, <MassView />);
    expect(text(html, 'mass-models')).toBe('models tiny.gguf');
    expect(html).toMatch(/<option value="evo-m"[^>]*>evo-m — learn-tool, models tiny\.gguf, rule/);
  });
});
