import { describe, expect, it } from 'vitest';
import { ScriptedProvider, type GenerateRequest } from '../../model/index.ts';
import { ReplayProvider } from '../../../models/replay/index.ts';
import { evaluateAttribution } from './evaluate.ts';
import { judgeCallRecord, judgeLog, NARROWED_JUDGE, stepRanges, type JudgeCallRecord } from './judge.ts';
import { narrowedView } from './narrowed.ts';
import { normalizeAgent } from './whoAndWhen.ts';
import type { LogStep, WhoAndWhenLog } from './types.ts';

function log(steps: Array<[string, string]>, id = 'n1'): WhoAndWhenLog {
  const s: LogStep[] = steps.map(([raw, content], index) => ({ index, agent: normalizeAgent(raw), rawAgent: raw, content }));
  return { id, file: `/tmp/${id}.json`, variant: 'hand-crafted', question: 'Count the penguins.', groundTruth: '291', isCorrect: false, steps: s, agents: [...new Set(s.map((x) => x.agent))], label: { agent: 'Assistant', rawAgent: 'Assistant', step: 3, reason: '' } };
}

const team = log([
  ['human', 'Count the penguins.'],
  ['Orchestrator (thought)', 'Plan: look it up, then compute.'],
  ['WebSurfer', 'I found the population page.'],
  ['Assistant', '```python\nprint(len(rows))\n```'],
  ['ComputerTerminal', 'The script ran, then exited with Unix exit code: 1\nIts output was:\nNameError: rows'],
  ['Orchestrator (thought)', 'Retrying.'],
  ['WebSurfer', 'Error: the page failed to load'],
]);

describe('the narrowed judge: only what structure cannot separate', () => {
  it('the view: steps up to the first surfaced error; candidates without the human and the terminal run whose author is known', () => {
    const v = narrowedView(team);
    expect(v.firstError).toBe(4);
    expect(v.steps.map((s) => s.index)).toEqual([0, 1, 2, 3, 4]);
    expect(v.candidateSteps).toEqual([1, 2, 3]);
    expect(v.agents).toEqual(['Orchestrator', 'WebSurfer', 'Assistant']);
    expect(v.note).toContain('Step 4 (of 7) surfaced an error (nonzero-exit-code: exit code: 1)');
    // No surfaced error: the whole log, every agent step.
    const quiet = narrowedView(log([['human', 't'], ['WebSurfer', 'fine'], ['Orchestrator (thought)', 'done']]));
    expect(quiet).toMatchObject({ firstError: null, candidateSteps: [1, 2], note: '' });
    expect(stepRanges([7, 1, 2, 3, 5, 8])).toBe('1–3, 5, 7–8');
  });

  it('asks under a schema of those candidates only, and its calls replay without a model', async () => {
    const requests: GenerateRequest[] = [];
    const provider = new ScriptedProvider((r) => {
      requests.push(r);
      return '{"agent": "Assistant", "step": 3}';
    });
    const recorded: JudgeCallRecord[] = [];
    const out = await judgeLog(team, NARROWED_JUDGE, { provider, seed: 4, onCall: (c) => recorded.push(judgeCallRecord(c, 0)) });
    expect(out).toEqual({ prediction: { agent: 'Assistant', step: 3 }, calls: 1, invalidAnswers: 0 });
    const r = requests[0]!;
    const props = (r.jsonSchema as { properties: Record<string, { enum: unknown[] }> }).properties;
    expect(props.agent!.enum).toEqual(['Orchestrator', 'WebSurfer', 'Assistant']);
    expect(props.step!.enum).toEqual([1, 2, 3]);
    expect(r.prompt).toContain('Conversation log (steps 0–4 of 7; you may name steps 1–3):');
    expect(r.prompt).not.toContain('[6] WebSurfer');
    expect(r.key).toEqual({ taskKey: 'n1', nodeId: 'judge', attempt: 1, callIndex: 0 });
    expect(recorded).toEqual([expect.objectContaining({ taskIndex: 0, nodeId: 'judge', attempt: 1, callIndex: 0, logId: 'n1', method: NARROWED_JUDGE, seed: 4, completion: '{"agent": "Assistant", "step": 3}', prompt: r.prompt, system: r.system })]);
    // A reply outside the candidates is unusable, never guessed.
    const outside = await judgeLog(team, NARROWED_JUDGE, { provider: new ScriptedProvider(() => '{"agent": "WebSurfer", "step": 6}') });
    expect(outside).toMatchObject({ prediction: null, invalidAnswers: 1 });

    // Replay: the recorded calls answer the same requests; the records are identical.
    const logs = [team, { ...team, id: 'n2' }];
    const live: JudgeCallRecord[] = [];
    const first = await evaluateAttribution(logs, NARROWED_JUDGE, { judge: { provider, onCall: (c) => live.push(judgeCallRecord(c, logs.findIndex((l) => l.id === c.logId))) } });
    const idOf = new Map(live.map((c) => [c.taskIndex, c.logId]));
    const replay = new ReplayProvider(live, { taskKeyOf: (i) => idOf.get(i)! });
    const again = await evaluateAttribution(logs, NARROWED_JUDGE, { judge: { provider: replay } });
    expect(again.records).toEqual(first.records);
    expect(replay.unusedCalls()).toEqual([]);
    // A changed prompt is refused by the replay, not answered from the wrong recording.
    await expect(evaluateAttribution(logs, NARROWED_JUDGE, { judge: { provider: new ReplayProvider(live, { taskKeyOf: (i) => idOf.get(i)! }), maxChars: 20 } })).rejects.toThrow(/prompt differs from the recording/);
  });
});
