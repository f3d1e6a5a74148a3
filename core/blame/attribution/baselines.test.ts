import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { firstWorkerPrediction, hybridRecord, majorityAgent, majorityPrediction, orchestratorsOf } from './baselines.ts';
import { evaluateAttribution } from './evaluate.ts';
import { agentCorrectOfficial, scoreOfficial, stepCorrectOfficial } from './score.ts';
import { importWhoAndWhen, normalizeAgent, parseWhoAndWhenLog, WhoAndWhenError } from './whoAndWhen.ts';
import type { AttributionRecord, LogStep, WhoAndWhenLog } from './types.ts';
import { main } from '../../../cli/main.ts';
import { capture, tempDir } from '../../../test/fixtures.ts';

function log(steps: Array<[string, string]>, label: [string, number], id = 'x'): WhoAndWhenLog {
  const s: LogStep[] = steps.map(([raw, content], index) => ({ index, agent: normalizeAgent(raw), rawAgent: raw, content }));
  return { id, file: `/tmp/${id}.json`, variant: 'hand-crafted', question: 'q', groundTruth: 'g', isCorrect: false, steps: s, agents: [...new Set(s.map((x) => x.agent))], label: { agent: label[0], rawAgent: label[0], step: label[1], reason: '' } };
}

const magentic: Array<[string, string]> = [
  ['human', 'Find the album count.'],
  ['Orchestrator (thought)', 'Plan.'],
  ['Orchestrator (-> WebSurfer)', 'Search for it.'],
  ['WebSurfer', 'I typed albums into the search bar.'],
  ['Orchestrator (-> ComputerTerminal)', 'Run it.'],
  ['ComputerTerminal', 'The script ran, then exited with Unix exit code: 0'],
  ['FileSurfer', 'Address: file:///workspace/a.txt'],
];

describe('label-free baselines and the hybrid', () => {
  it('first worker: the first message of an agent that is not the human, an orchestrator or a terminal', () => {
    expect(firstWorkerPrediction(log(magentic, ['WebSurfer', 3]))).toEqual({ agent: 'WebSurfer', step: 3 });
    // Anyone who issues (-> X) instructions is an orchestrator, whatever its name.
    const lead = log([['human', 't'], ['Lead (-> Coder)', 'write it'], ['Coder', 'done']], ['Coder', 2]);
    expect([...orchestratorsOf(lead)]).toEqual(['orchestrator', 'lead']);
    expect(firstWorkerPrediction(lead)).toEqual({ agent: 'Coder', step: 2 });
    expect(firstWorkerPrediction(log([['human', 't'], ['Orchestrator (thought)', 'hm'], ['ComputerTerminal', 'exitcode: 0']], ['Orchestrator', 1]))).toBeNull();
  });

  it('majority: the most often labelled agent of the set, at its first message; unscorable logs do not count', () => {
    const logs = [log(magentic, ['WebSurfer', 3], 'a'), log(magentic, ['FileSurfer', 6], 'b'), log(magentic, ['websurfer', 1], 'c'), { ...log(magentic, ['FileSurfer', 99], 'd'), unscorable: 'out of range' }];
    expect(majorityAgent(logs)).toBe('WebSurfer');
    expect(majorityPrediction(logs[1]!, 'WebSurfer')).toEqual({ agent: 'WebSurfer', step: 3 });
    expect(majorityPrediction(log([['human', 't'], ['Orchestrator', 'x']], ['Orchestrator', 1]), 'WebSurfer')).toBeNull();
    expect(majorityAgent([])).toBeNull();
  });

  it('hybrid: structure where it blames an agent, else the first-worker prior', () => {
    const failing = log([...magentic, ['FileSurfer', 'Error: could not open the file']], ['FileSurfer', 7]);
    expect(hybridRecord(failing)).toMatchObject({ prediction: { agent: 'FileSurfer', step: 7 }, note: 'structure: error-line' });
    const quiet = log(magentic, ['WebSurfer', 3]);
    expect(hybridRecord(quiet)).toMatchObject({ prediction: { agent: 'WebSurfer', step: 3 }, note: expect.stringContaining('prior: first worker') });
    // The end-of-run crash is structure's (the speaker's execution failure) in the hybrid.
    const crash = log([...magentic, ['Orchestrator (thought)', 'Done.\nError processing publish message\nTraceback (most recent call last):\n  File "x"']], ['Orchestrator', 7]);
    expect(hybridRecord(crash).prediction).toEqual({ agent: 'Orchestrator', step: 7 });
    expect(hybridRecord(crash, { harnessCrash: 'infrastructure' }).prediction).toEqual({ agent: 'WebSurfer', step: 3 });
  });
});

describe('official-style scoring (substring), beside strict', () => {
  const rec = (label: [string, number], pred: [string, number] | null): AttributionRecord => ({ logId: 'x', label: { agent: label[0], step: label[1], rawAgent: label[0] }, prediction: pred && { agent: pred[0], step: pred[1] } });
  it('gold step 1 matches a predicted 10 there, not here; the agent label must appear as written', () => {
    expect(stepCorrectOfficial(rec(['WebSurfer', 1], ['WebSurfer', 10]))).toBe(true);
    expect(stepCorrectOfficial(rec(['WebSurfer', 10], ['WebSurfer', 1]))).toBe(false);
    expect(agentCorrectOfficial(rec(['WebSurfer', 1], ['websurfer', 1]))).toBe(false); // case-sensitive there
    expect(agentCorrectOfficial(rec(['Surfer', 1], ['WebSurfer', 1]))).toBe(true);
    const s = scoreOfficial([rec(['WebSurfer', 1], ['WebSurfer', 12]), rec(['Orchestrator', 3], ['WebSurfer', 4]), rec(['WebSurfer', 2], null)]);
    expect(s).toEqual({ logs: 3, covered: 2, agentAccuracy: { overAll: 1 / 3, overCovered: 1 / 2 }, stepAccuracy: { overAll: 1 / 3, overCovered: 1 / 2 } });
  });
});

describe('an out-of-range label is unscorable, not fatal', () => {
  const file = (history: Array<{ role: string; content: string }>, step: unknown) => JSON.stringify({ question: 'q', ground_truth: 'g', is_corrected: false, mistake_agent: 'WebSurfer', mistake_step: step, mistake_reason: 'r', history });
  const history = [{ role: 'human', content: 'task' }, { role: 'WebSurfer', content: 'Error: page failed to load' }];

  it('parse: recorded with the reason (the default still throws)', () => {
    const l = parseWhoAndWhenLog(file(history, '7'), '/x/3.json', undefined, { badLabel: 'unscorable' });
    expect(l.unscorable).toBe('"mistake_step" "7" is not an integer in range 0..1');
    expect(l.label.step).toBe(7);
    expect(parseWhoAndWhenLog(file(history, 'two'), '/x/3.json', undefined, { badLabel: 'unscorable' }).label.step).toBeNaN();
    expect(() => parseWhoAndWhenLog(file(history, '7'), '/x/3.json')).toThrow(WhoAndWhenError);
    // A broken history is still fatal: only the label can be unscorable.
    expect(() => parseWhoAndWhenLog('{"history": []}', '/x/4.json', undefined, { badLabel: 'unscorable' })).toThrow('"history" is empty');
  });

  it('import with badLog: a file that is not a log is recorded with its reason; the default still throws', () => {
    const dir = tempDir('ww-badlog');
    writeFileSync(path.join(dir, '1.json'), file(history, '1'));
    writeFileSync(path.join(dir, '2.json'), 'not json');
    writeFileSync(path.join(dir, '3.json'), '"a string"');
    writeFileSync(path.join(dir, '4.json'), '{"history": []}');
    expect(() => importWhoAndWhen(dir, { badLabel: 'unscorable' })).toThrow(WhoAndWhenError);
    const logs = importWhoAndWhen(dir, { badLabel: 'unscorable', badLog: 'unscorable' });
    expect(logs.map((l) => [l.id, l.steps.length, l.unscorable?.replace(/ \(.*/, ' (...)') ?? 'ok'])).toEqual([
      ['1', 2, 'ok'],
      ['2', 0, 'not valid JSON (...)'],
      ['3', 0, 'expected a JSON object'],
      ['4', 0, '"history" is empty'],
    ]);
    expect(logs[1]!.file).toBe(path.join(dir, '2.json'));
  });

  it('evaluate and the CLI: every other log is scored, the bad one is listed', async () => {
    const dir = tempDir('ww-unscorable');
    writeFileSync(path.join(dir, '1.json'), file(history, '1'));
    writeFileSync(path.join(dir, '2.json'), file(history, '99'));
    writeFileSync(path.join(dir, '3.json'), file(history, 1));
    const logs = importWhoAndWhen(dir, { badLabel: 'unscorable' });
    expect(logs.map((l) => l.unscorable ?? 'ok')).toEqual(['ok', '"mistake_step" "99" is not an integer in range 0..1', 'ok']);
    const e = await evaluateAttribution(logs, 'hybrid');
    expect(e.records.map((r) => r.logId)).toEqual(['1', '3']);
    expect(e.unscorable).toEqual([{ logId: '2', file: path.join(dir, '2.json'), reason: '"mistake_step" "99" is not an integer in range 0..1' }]);
    expect(e.score).toMatchObject({ logs: 2, covered: 2, agentAccuracy: { overAll: 1 }, stepAccuracy: { overAll: 1 } });

    const refused = capture();
    expect(await main(['attribution-eval', '--dataset', 'who-and-when', '--method', 'all', '--path', dir, '--json'], refused)).toBe(1);
    expect(refused.err).toContain(`1 of 3 Who&When logs in ${dir} cannot be scored; the first: ${path.join(dir, '2.json')}: "mistake_step" "99" is not an integer in range 0..1`);
    const io = capture();
    expect(await main(['attribution-eval', '--dataset', 'who-and-when', '--method', 'all', '--path', dir, '--json', '--skip-bad'], io)).toBe(0);
    const j = JSON.parse(io.out);
    expect(j).toMatchObject({ logs: 3, scored: 2, unscorable: [{ logId: '2' }] });
    expect(j.rows.map((r: { id: string }) => r.id)).toEqual(['surfaced-infrastructure', 'surfaced', 'structural', 'hybrid', 'first-worker', 'majority']);
    const table = capture();
    expect(await main(['attribution-eval', '--dataset', 'who-and-when', '--method', 'surfaced', '--path', dir, '--skip-bad'], table)).toBe(0);
    expect(table.out).toContain('Unscorable logs, left out of every accuracy (1):');
    expect(table.out).toContain(`${path.join(dir, '2.json')}: "mistake_step" "99" is not an integer in range 0..1`);
    expect(table.out).toContain('baseline: first worker message (label-free)');
    expect(table.out).toContain('official-style step accuracy, over all logs (substring)');
  });
});
