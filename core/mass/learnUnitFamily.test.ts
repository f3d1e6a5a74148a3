import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../model/provider.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import { openStore } from '../store/index.ts';
import { learnJudgeGrader } from '../tasks/learnJudge.ts';
import { learnUnitTask } from '../tasks/learnUnit.ts';
import type { Task } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import { CheckRegistry } from '../workflow/checks.ts';
import { compileMass } from './compile.ts';
import { massFamily } from './family.ts';
import { judgePair } from './judge.ts';
import { blindSpotRate } from './rsi.ts';
import { runStep } from './stored.ts';
import type { Workspace } from './types.ts';

const ws = (runId: string, answer: string | undefined, score = 0) => ({ runId, answer, grade: { score } }) as unknown as Workspace;

describe('learn-unit as a MASS family', () => {
  const family = massFamily('learn-unit');
  const task = learnUnitTask('heldout', 0);

  it('the solver answers under the task\'s own grammar: the five forms of its pair', () => {
    const doc = JSON.parse(compileMass(null, task, family).workflowText) as { nodes: Array<{ id: string; output?: { schema: unknown } }> };
    const m = task.meta as { options: string[] };
    expect(doc.nodes.find((n) => n.id === 'answer')!.output!.schema).toEqual({ enum: m.options });
    expect(family.prompt(task)).toBe(`Tool reading: ${String(task.input.reading)}\nRequest: ${String(task.input.request)}\nAnswer:`);
  });

  it('the self-judge sees exactly examples/judge-learn.yaml\'s prompt, budget and grammar for the same request and answers', async () => {
    const seen: GenerateRequest[] = [];
    const provider = new ScriptedProvider((r) => (seen.push(r), '"B"'));
    const m = task.meta as { options: string[] };
    const v = await judgePair(ws('r0', JSON.stringify(m.options[1])), ws('r1', JSON.stringify(m.options[0])), [], provider, { task, pairJudge: family.pairJudge! });
    expect(v).toMatchObject({ winner: 'B', valid: true });
    // The same pair as a learn-judge task, run through the YAML the judge was trained with.
    const store = openStore(':memory:');
    const judgeTask: Task = { id: 'learn-judge/heldout/0', index: 0, input: { kind: 'judge', request: task.input.request, a: m.options[1], b: m.options[0] }, expected: 'B' };
    const step = await runStep({ store, provider, tools: defaultTools() }, { experimentId: 'yaml-judge', workflowText: readFileSync('examples/judge-learn.yaml', 'utf8'), task: judgeTask, input: judgeTask.input, grader: learnJudgeGrader, checks: new CheckRegistry(), seed: 1, about: {} });
    store.close();
    expect(step.run.score).toBe(1);
    expect(seen).toHaveLength(2);
    const [ours, yaml] = seen as [GenerateRequest, GenerateRequest];
    expect(ours.prompt).toBe(`Request: ${String(task.input.request)}\nA: ${m.options[1]}\nB: ${m.options[0]}\nRight:\n`);
    expect(ours.prompt).toBe(yaml.prompt);
    expect(ours.system ?? '').toBe(yaml.system ?? '');
    expect(ours.params).toEqual(yaml.params);
    expect(ours.jsonSchema).toEqual({ enum: ['A', 'B'] });
    expect(yaml.jsonSchema).toEqual(ours.jsonSchema);
  });

  it('a run with no answer is shown to the judge as `none`', async () => {
    const seen: string[] = [];
    const provider = new ScriptedProvider((r) => (seen.push(r.prompt), '"A"'));
    const v = await judgePair(ws('r0', undefined), ws('r1', '"63 km"'), [], provider, { task, pairJudge: family.pairJudge! });
    expect(v.winner).toBe('A');
    expect(seen[0]).toContain('\nA: none\nB: 63 km\n');
  });

  it('blind-spot error rate by hand: 2 of 5 held-out answers in the wrong unit -> 0.4, Wilson [0.118, 0.769]', () => {
    const m = task.meta as { options: string[] };
    const answers = [m.options[0], m.options[1], m.options[1], m.options[2], 'none'].map((a) => JSON.stringify(a));
    const r = blindSpotRate(answers.map((a, i) => ws(`r${i}`, a)), [task], 5, family.answerClassOf!);
    expect(r.classes).toEqual({ right: 1, 'blind-unit': 2, 'lost-number': 1, none: 1 });
    expect(r.rate).toMatchObject({ errors: 2, n: 5, rate: 0.4 });
    // Wilson, z = 1.96: centre (0.4 + 1.9208/5)/(1 + 3.8416/5) = 0.44345; half 1.96·sqrt(0.048 + 0.038416)/1.76832 = 0.32583.
    expect(r.rate.interval![0]).toBeCloseTo(0.1176, 3);
    expect(r.rate.interval![1]).toBeCloseTo(0.7693, 3);
    expect(blindSpotRate([], [], 1, family.answerClassOf!).rate).toEqual({ errors: 0, n: 0, rate: null, interval: null });
  });
});
