import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../model/provider.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import { openStore } from '../store/index.ts';
import { learnDesignJudgeTask } from '../tasks/learnDesignJudge.ts';
import { learnJudgeGrader } from '../tasks/learnJudge.ts';
import { CheckRegistry } from '../workflow/checks.ts';
import { judgePair } from './judge.ts';
import { runStep } from './stored.ts';
import type { Workspace } from './types.ts';
import { createLearnDesignDataset, learnDesignTask } from '../tasks/learnDesign.ts';
import { defaultTools } from '../tools/index.ts';
import { assembleAnswer } from './answerTool.ts';
import { parseMassDesign } from './design.ts';
import { applyEdit, type MassEdit } from './edits.ts';
import { compareOnHeldout } from './heldout.ts';
import { oracleTeam, sloppyTeam, ldCatalogue, ldFamily, ldFirstDesign } from './learnDesign.fixture.ts';
import { cuedArguments, cuedTool, DESIGN_CHECKS, designAnswerGrader } from './learnDesignFamily.ts';
import { runMass } from './run.ts';
import type { MassDesign } from './types.ts';

const family = ldFamily;
const catalogue = ldCatalogue;
const first = ldFirstDesign();
const edited = (...edits: MassEdit[]): MassDesign => {
  const d = edits.reduce(applyEdit, first);
  const r = parseMassDesign(JSON.parse(JSON.stringify(d)), catalogue);
  if (!r.ok) throw new Error(r.issues.map((i) => i.message).join('; '));
  return r.design;
};
const heldout = createLearnDesignDataset().load({ split: 'heldout', limit: 6 });
const tools = defaultTools();

/** Mean external score of `design` over `tasks` with `team`. */
async function meanScore(design: MassDesign | null, tasks: typeof heldout, team: ReturnType<typeof oracleTeam>): Promise<number> {
  let sum = 0;
  for (const task of tasks) sum += (await runMass(design, task, { provider: team, family, tools })).grade.score;
  return sum / tasks.length;
}

describe('learn-design as a MASS family (the workflow matters)', () => {
  it('the cue words fix the tool and the argument of every generated task (train and held-out)', () => {
    for (const [split, n] of [['train', 2000], ['heldout', 500]] as const) {
      for (let i = 0; i < n; i++) {
        const t = learnDesignTask(split, i);
        const req = String(t.input.request);
        expect(cuedTool(req), req).toBe(t.meta!.tool);
        expect(cuedArguments(req), req).toEqual([t.meta!.argument]);
      }
    }
  });

  it('checks read the reply and the inputs only; argument_fits_tool needs a tool to read', () => {
    const brief = 'Request: What is 3 plus 4?\nTools: weather, search, math';
    expect(DESIGN_CHECKS.tool_fits_request!({ tool: 'math' }, { inputs: { brief } })).toBeNull();
    expect(DESIGN_CHECKS.tool_fits_request!({ tool: 'search' }, { inputs: { brief } })).toBe('the request asks for math, the reply names search');
    expect(DESIGN_CHECKS.tool_fits_request!({ argument: 'add' }, { inputs: { brief } })).toBe('the reply names no tool');
    expect(DESIGN_CHECKS.argument_in_request!({ argument: 'add' }, { inputs: { brief } })).toBeNull();
    expect(DESIGN_CHECKS.argument_in_request!({ argument: 'multiply' }, { inputs: { brief } })).toBe('the request does not name the argument multiply');
    expect(DESIGN_CHECKS.argument_fits_tool!({ argument: 'add' }, { inputs: { brief } })).toMatch(/no tool to check/);
    expect(DESIGN_CHECKS.argument_fits_tool!({ argument: 'add' }, { inputs: { brief, r0: { tool: 'math' } } })).toBeNull();
    expect(DESIGN_CHECKS.argument_fits_tool!({ argument: 'now' }, { inputs: { brief, r0: { tool: 'math' } } })).toBe('now is not an argument of math');
  });

  it('assembles the answer from the last reply holding each field, and grades it per part', () => {
    expect(assembleAnswer([{ tool: 'search' }, null, { tool: 'math', argument: 'add' }, { argument: '' }], ['tool', 'argument'])).toEqual({ tool: 'math', argument: 'add' });
    expect(assembleAnswer([null, undefined], ['tool', 'argument'])).toEqual({ tool: null, argument: null });
    const task = learnDesignTask('train', 0); // weather:<day>
    const day = String(task.meta!.argument);
    expect(designAnswerGrader.grade({ tool: 'weather', argument: day }, task).score).toBe(1);
    expect(designAnswerGrader.grade({ tool: 'weather', argument: null }, task).score).toBe(0.5);
    expect(designAnswerGrader.grade({ tool: null, argument: day }, task).score).toBe(0.5);
    expect(designAnswerGrader.grade({ tool: 'math', argument: 'add' }, task).score).toBe(0);
    expect(designAnswerGrader.grade(undefined, task).score).toBe(0);
  });

  it('the oracle (SIMULATED perfect team) scores 1 on every task through the pipeline, bare or designed', async () => {
    const tasks = [...createLearnDesignDataset().load({ split: 'train', limit: 6 }), ...heldout];
    expect(await meanScore(first, tasks, oracleTeam())).toBe(1);
    expect(await meanScore(edited({ op: 'add_check', agent: 'picker', check: 'tool_fits_request' }, { op: 'retry', hop: 1, max: 2 }, { op: 'set_reads', hop: 2, reads: 'picker' }, { op: 'add_check', agent: 'filler', check: 'argument_fits_tool' }), tasks, oracleTeam())).toBe(1);
    expect(await meanScore(null, tasks, oracleTeam())).toBe(1);
  });

  it('with a team that makes a class of mistakes, which checks, retries and hand-offs a design has changes the score (by hand)', async () => {
    // Held-out 0..5 cycle weather, search, math: the sloppy picker's first try ("search") is right on 2 of 6.
    expect(heldout.map((t) => t.meta!.tool)).toEqual(['weather', 'search', 'math', 'weather', 'search', 'math']);
    const team = sloppyTeam();
    // v0: tool right on 2 tasks (1.0), argument right everywhere (0.5 on the other 4): (2 + 4 * 0.5) / 6.
    expect(await meanScore(first, heldout, team)).toBeCloseTo(4 / 6, 10);
    // A check without a retry turns a wrong tool into a missing one: no gain.
    expect(await meanScore(edited({ op: 'add_check', agent: 'picker', check: 'tool_fits_request' }), heldout, team)).toBeCloseTo(4 / 6, 10);
    // Check plus retry: the retried picker answers right: 1 everywhere.
    expect(await meanScore(edited({ op: 'add_check', agent: 'picker', check: 'tool_fits_request' }, { op: 'retry', hop: 1, max: 1 }), heldout, team)).toBe(1);
    // guard: the same check and retry as one edit.
    expect(await meanScore(edited({ op: 'guard', agent: 'picker', check: 'tool_fits_request' }), heldout, team)).toBe(1);
    // A check on the wrong agent loses the argument: only the 2 right tools score (0.5 each): 1 / 6.
    expect(await meanScore(edited({ op: 'add_check', agent: 'filler', check: 'tool_fits_request' }), heldout, team)).toBeCloseTo(1 / 6, 10);
    // argument_fits_tool with no hand-off fails every time (1/6); reading the picker it passes where the picker was right: 2 / 6.
    expect(await meanScore(edited({ op: 'add_check', agent: 'filler', check: 'argument_fits_tool' }), heldout, team)).toBeCloseTo(1 / 6, 10);
    expect(await meanScore(edited({ op: 'add_check', agent: 'filler', check: 'argument_fits_tool' }, { op: 'set_reads', hop: 2, reads: 'picker' }), heldout, team)).toBeCloseTo(2 / 6, 10);
  });

  it('compares two designs on held-out tasks pairwise (sign test by hand)', async () => {
    const store = openStore(':memory:');
    const tasks = createLearnDesignDataset().load({ split: 'heldout', limit: 12 });
    const best = edited({ op: 'add_check', agent: 'picker', check: 'tool_fits_request' }, { op: 'retry', hop: 1, max: 1 });
    const c = await compareOnHeldout({ evolutionId: 'h', tasks, base: { label: 'v0', design: first }, candidate: { label: 'v2', design: best }, seed: 1 }, { store, provider: sloppyTeam(), family, tools });
    // 8 of 12 tasks are weather or math: +0.5 each; 4 ties. Sign test: 2 * 0.5^8.
    expect([c.n, c.baseMean, c.candidateMean]).toEqual([12, (4 + 8 * 0.5) / 12, 1]);
    expect(c.sign).toEqual({ positive: 8, negative: 0, ties: 4, p: 2 * 0.5 ** 8 });
    expect(c.diff.mean).toBeCloseTo(4 / 12, 10);
    // Held-out index mod 4 = 3 is new-wording: 3, 7, 11.
    expect(c.byNovelty['new-wording']!.n).toBe(3);
    // Stored steps: read back, not run again.
    expect(store.listExperiments().filter((x) => x.id.startsWith('h.heldout.'))).toHaveLength(24);
    store.close();
  });

  it('the pair judge sees exactly examples/judge-design.yaml\'s prompt, budget and grammar for the same request and answers', async () => {
    const seen: GenerateRequest[] = [];
    const provider = new ScriptedProvider((r) => (seen.push(r), '"A"'));
    const jt = learnDesignJudgeTask('heldout', 0);
    const base = learnDesignTask('heldout', 0);
    const ws = (runId: string, answer: unknown) => ({ runId, answer, grade: { score: 0 } }) as unknown as Workspace;
    const side = (s: string) => (s === 'none' ? undefined : { tool: s.split(' ')[0], argument: s.split(' ')[1] === 'none' ? undefined : s.split(' ')[1] });
    const v = await judgePair(ws('r0', side(String(jt.input.a))), ws('r1', side(String(jt.input.b))), [], provider, { task: base, pairJudge: family.pairJudge! });
    expect(v).toMatchObject({ winner: 'A', valid: true });
    const store = openStore(':memory:');
    const step = await runStep({ store, provider, tools }, { experimentId: 'yaml-judge', workflowText: readFileSync('examples/judge-design.yaml', 'utf8'), task: jt, input: jt.input, grader: learnJudgeGrader, checks: new CheckRegistry(), seed: 1, about: {} });
    store.close();
    expect(step.run.score).toBe(jt.expected === 'A' ? 1 : 0);
    const [ours, yaml] = seen as [GenerateRequest, GenerateRequest];
    expect(ours.prompt).toBe(`Request: ${String(base.input.request)}\nA: ${String(jt.input.a)}\nB: ${String(jt.input.b)}\nRight:\n`);
    expect(ours.prompt).toBe(yaml.prompt);
    expect(ours.system ?? '').toBe(yaml.system ?? '');
    expect(ours.params).toEqual(yaml.params);
    expect(ours.jsonSchema).toEqual({ enum: ['A', 'B'] });
    expect(yaml.jsonSchema).toEqual(ours.jsonSchema);
    // A run without an answer reads as `none`; a missing part as `none`.
    await judgePair(ws('r2', undefined), ws('r3', { tool: 'math' }), [], provider, { task: base, pairJudge: family.pairJudge! });
    expect(seen[2]!.prompt).toContain('\nA: none\nB: math none\n');
  });
});
