/**
 * A toy study for tests: two workflows (conditions `base` and `better`) on two zones of a
 * six-task toy dataset, with a scripted provider (workflow `base` is right on even tasks, `better`
 * on all), over an in-memory store the caller passes. `runToyStudy` runs it to the end.
 */
import type { ModelConfig, ModelPort } from '../model/config.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import type { Store } from '../store/port.ts';
import type { Dataset, Grader } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { studyIdOf } from './cells.ts';
import { parseStudyPlan, type StudyPlan } from './plan.ts';
import { runStudy, type StudyDeps, type StudyOutcome, type StudyRunOptions } from './run.ts';

export const TOY_PLAN = `name: toy
baseline: base
conditions:
  - { id: base, kind: workflow, workflow: a.yaml }
  - { id: better, label: better workflow, kind: workflow, workflow: b.yaml }
zones:
  - { id: id, kind: in-distribution, dataset: toy, split: test, limit: 4 }
  - { id: far, kind: out-of-domain, dataset: toy, split: test, limit: 2, offset: 4 }
models:
  - { id: m, model: /m/toy.gguf, threads: 1 }
`;

const yaml = (name: string) => `
name: ${name}
roles: { s: { kind: executor } }
nodes:
  - { id: solve, role: s, prompt: "{{q}}", inputs: { q: task.question }, output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } } }
answer: solve.answer
`;
const grader: Grader = { grade: (a, t) => ({ score: Number(a) === Number(t.expected) ? 1 : 0, correct: Number(a) === Number(t.expected), extracted: String(a), expected: t.expected }) };
const toy: Dataset = { name: 'toy', splits: ['test'], grader, load: ({ limit, offset = 0 }) => Array.from({ length: 6 }, (_, i) => ({ id: `toy/test/${i}`, index: i, input: { question: `${i}+1` }, expected: String(i + 1) })).slice(offset, offset + (limit ?? 6)) };

/** The toy study's plan, id and deps over `store` (its row created); `calls()` counts model calls. */
export function toyStudy(store: Store): { plan: StudyPlan; id: string; deps: StudyDeps; calls: () => number } {
  const tools = defaultTools();
  const plan = parseStudyPlan(TOY_PLAN);
  let calls = 0;
  const port: ModelPort = {
    create: async (cfg) => new ScriptedProvider((r) => {
      calls++;
      const i = Number(r.prompt.split('+')[0]);
      return JSON.stringify({ answer: cfg.models.default === '/m/b.gguf' || i % 2 === 0 ? i + 1 : 0 });
    }),
  };
  const workflows = Object.fromEntries(['base', 'better'].map((c) => [c, { ...parseWorkflow(yaml(c), { tools }), text: yaml(c) }]));
  const deps: StudyDeps = {
    store, models: port, tools, datasets: () => toy, trainer: () => Promise.reject(new Error('no training here')), workflows, versionsDir: '/tmp/none',
    resolve: (c): ModelConfig => ({ models: { default: c === 'better' ? '/m/b.gguf' : '/m/a.gguf' }, roleModels: { s: 'default' }, gpu: false }),
  };
  const id = studyIdOf(plan);
  store.studies.create({ id, name: plan.name, plan });
  return { plan, id, deps, calls: () => calls };
}

/** Runs the toy study over `store`. */
export async function runToyStudy(store: Store, opts: StudyRunOptions = {}): Promise<StudyOutcome & { calls: number }> {
  const t = toyStudy(store);
  const out = await runStudy(t.plan, t.id, t.deps, opts);
  return { ...out, calls: t.calls() };
}
