import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentKey, importWhoAndWhen, normalizeAgent, parseWhoAndWhenLog, WhoAndWhenError } from './whoAndWhen.ts';
import { tempDir } from '../../../test/fixtures.ts';

const tmp = () => tempDir('ww');

const handCrafted = {
  is_corrected: false,
  question: 'How many studio albums?',
  question_ID: 'q-hc',
  ground_truth: '3',
  history: [
    { content: 'How many studio albums?', role: 'human' },
    { content: 'Plan: ask WebSurfer.', role: 'Orchestrator (thought)' },
    { content: 'Search for albums.', role: 'Orchestrator (-> WebSurfer)' },
    { content: 'I typed albums into the search bar.', role: 'WebSurfer' },
    { content: 'Request satisfied.', role: 'Orchestrator (termination condition)' },
  ],
  mistake_agent: 'WebSurfer',
  mistake_step: '3',
  mistake_reason: 'Searched the wrong site.',
};

const algorithmGenerated = {
  is_correct: false,
  question: 'What is 2+2?',
  question_ID: 'q-ag',
  level: 1,
  ground_truth: '4',
  history: [
    { content: 'Solve 2+2 with code.', role: 'assistant', name: 'Math_Expert' },
    { content: 'exitcode: 1 (execution failed)\nCode output: NameError', role: 'user', name: 'Computer_terminal' },
    { content: 'The answer is 5.', role: 'user', name: 'Verification_Expert' },
    { content: 'TERMINATE', role: 'user' },
  ],
  mistake_agent: 'Verification_Expert',
  mistake_step: 2,
  mistake_reason: 'Wrong sum.',
  system_prompt: { Math_Expert: '...' },
};

describe('agent names', () => {
  it('strips trailing parenthesised qualifiers (Magentic-One orchestrator labels) and compares case-insensitively', () => {
    expect(normalizeAgent('Orchestrator (thought)')).toBe('Orchestrator');
    expect(normalizeAgent('Orchestrator (-> WebSurfer)')).toBe('Orchestrator');
    expect(normalizeAgent(' Orchestrator (termination condition) ')).toBe('Orchestrator');
    expect(normalizeAgent('WebSurfer')).toBe('WebSurfer');
    expect(normalizeAgent('Verification_Expert')).toBe('Verification_Expert');
    expect(normalizeAgent('(thought)')).toBe('(thought)');
    expect(agentKey('websurfer')).toBe(agentKey('WebSurfer (x)'));
  });
});

describe('importWhoAndWhen', () => {
  it('reads both variants: Hand-Crafted (agent in role) and Algorithm-Generated (agent in name)', () => {
    const dir = tmp();
    writeFileSync(path.join(dir, '10.json'), JSON.stringify(algorithmGenerated));
    writeFileSync(path.join(dir, '2.json'), JSON.stringify(handCrafted));
    writeFileSync(path.join(dir, 'notes.txt'), 'ignored');
    const logs = importWhoAndWhen(dir);
    expect(logs.map((l) => l.id)).toEqual(['2', '10']); // natural order

    const hc = logs[0]!;
    expect(hc.variant).toBe('hand-crafted');
    expect(hc.file).toBe(path.join(dir, '2.json'));
    expect(hc.steps.map((s) => s.agent)).toEqual(['human', 'Orchestrator', 'Orchestrator', 'WebSurfer', 'Orchestrator']);
    expect(hc.steps[2]).toEqual({ index: 2, agent: 'Orchestrator', rawAgent: 'Orchestrator (-> WebSurfer)', content: 'Search for albums.' });
    expect(hc.agents).toEqual(['human', 'Orchestrator', 'WebSurfer']);
    expect(hc.label).toEqual({ agent: 'WebSurfer', rawAgent: 'WebSurfer', step: 3, reason: 'Searched the wrong site.' });
    expect(hc.isCorrect).toBe(false);
    expect(hc.questionId).toBe('q-hc');
    expect(hc.groundTruth).toBe('3');

    const ag = logs[1]!;
    expect(ag.variant).toBe('algorithm-generated');
    expect(ag.steps.map((s) => s.agent)).toEqual(['Math_Expert', 'Computer_terminal', 'Verification_Expert', 'user']);
    expect(ag.steps[1]!.chatRole).toBe('user');
    expect(ag.steps[3]!.chatRole).toBeUndefined(); // no name: the role is the speaker
    expect(ag.label.step).toBe(2);
    expect(ag.label.agent).toBe('Verification_Expert');
    expect(ag.isCorrect).toBe(false);
    expect(ag.level).toBe(1);

    expect(importWhoAndWhen(dir, { limit: 1 }).map((l) => l.id)).toEqual(['2']);
  });

  it('bad files: a clear error naming the file', () => {
    const dir = tmp();
    const file = path.join(dir, '1.json');
    const check = (content: string, message: RegExp) => {
      writeFileSync(file, content);
      let err: unknown;
      try {
        importWhoAndWhen(dir);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(WhoAndWhenError);
      expect((err as Error).message).toContain(file);
      expect((err as Error).message).toMatch(message);
    };
    check('{ "history": [', /not valid JSON/);
    check('[1, 2]', /expected a JSON object/);
    check(JSON.stringify({ ...handCrafted, history: undefined }), /missing "history"/);
    check(JSON.stringify({ ...handCrafted, history: [] }), /"history" is empty/);
    check(JSON.stringify({ ...handCrafted, mistake_step: '5' }), /"mistake_step" "5" is not an integer in range 0\.\.4/);
    check(JSON.stringify({ ...handCrafted, mistake_step: 'two' }), /"mistake_step" "two" is not an integer/);
    check(JSON.stringify({ ...handCrafted, mistake_step: 1.5 }), /"mistake_step" 1\.5 is not an integer/);
    check(JSON.stringify({ ...handCrafted, mistake_step: undefined }), /missing "mistake_step"/);
    check(JSON.stringify({ ...handCrafted, mistake_agent: undefined }), /missing "mistake_agent"/);
    check(JSON.stringify({ ...handCrafted, history: [{ content: 'x' }] }), /history\[0\] names no speaker/);
    check(JSON.stringify({ ...handCrafted, history: [{ content: 3, role: 'human' }] }), /history\[0\]\.content is not a string/);
  });

  it('a missing folder or a folder without logs: a clear error naming it', () => {
    const missing = path.join(tmp(), 'nope');
    expect(() => importWhoAndWhen(missing)).toThrow(`Who&When folder not found: ${missing}`);
    const empty = tmp();
    expect(() => importWhoAndWhen(empty)).toThrow(`no *.json logs in ${empty}`);
  });

  it('parses is_corrected given as a string and defaults missing text fields', () => {
    const log = parseWhoAndWhenLog(JSON.stringify({ history: [{ content: null, role: 'A' }], mistake_agent: 'A', mistake_step: '0', is_corrected: 'False' }), '/x/7.json');
    expect(log.id).toBe('7');
    expect(log.isCorrect).toBe(false);
    expect(log.steps[0]!.content).toBe('');
    expect(log.question).toBe('');
  });
});
