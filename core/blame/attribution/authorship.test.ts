import { describe, expect, it } from 'vitest';
import { addresseeOf, impossibleInstruction, teamAuthorship } from './authorship.ts';
import { STRUCTURAL_OPTIONS } from './baselines.ts';
import { attributeSurfaced, logTrace } from './surfaced.ts';
import { normalizeAgent } from './whoAndWhen.ts';
import type { LogStep, WhoAndWhenLog } from './types.ts';

/** A synthetic log from `[raw speaker, content]` pairs (Magentic-One spelling: `Orchestrator (-> X)`). */
function log(steps: Array<[string, string]>, label: [string, number] = ['Assistant', 1]): WhoAndWhenLog {
  const s: LogStep[] = steps.map(([raw, content], index) => ({ index, agent: normalizeAgent(raw), rawAgent: raw, content }));
  return {
    id: 'syn', file: '/tmp/syn.json', variant: 'hand-crafted', question: 'q', groundTruth: 'g', isCorrect: false,
    steps: s, agents: [...new Set(s.map((x) => x.agent))],
    label: { agent: label[0], rawAgent: label[0], step: label[1], reason: '' },
  };
}
const structural = (l: WhoAndWhenLog) => attributeSurfaced(l, STRUCTURAL_OPTIONS);

const code = 'Here is the script:\n```python\nimport pandas as pd\nprint(pd.read_csv("data.csv").shape)\n```';
const failedRun = 'The script ran, then exited with Unix exit code: 1\nIts output was:\nTraceback (most recent call last):\n  File "x.py", line 2\nKeyError: \'island\'';

describe('team authorship of a log (Magentic-One and AG2 teams)', () => {
  it('reads the addressee of an instruction', () => {
    expect(addresseeOf('Orchestrator (-> ComputerTerminal)')).toBe('ComputerTerminal');
    expect(addresseeOf('Orchestrator (thought)')).toBeNull();
    expect(addresseeOf('WebSurfer')).toBeNull();
  });

  it('code written by agent X, executed by a terminal that fails -> X blamed at X\'s step (not the terminal, not its output)', () => {
    const l = log([
      ['human', 'Count the penguins in data.csv.'],
      ['Orchestrator (-> Assistant)', 'Please write a script that counts the penguins.'],
      ['Assistant', code],
      ['Orchestrator (thought)', 'Next speaker ComputerTerminal'],
      ['Orchestrator (-> ComputerTerminal)', 'Please run the script above.'],
      ['ComputerTerminal', failedRun],
      ['Orchestrator (thought)', 'The script failed.'],
    ]);
    const a = teamAuthorship(l);
    expect(a[5]).toEqual({ index: 5, terminal: true, author: 'Assistant', authorStep: 2, codeStep: 2, wiredAt: 4, wirer: 'Orchestrator', noCode: false });
    expect(a[2]).toMatchObject({ author: 'Assistant', wiredAt: 1, wirer: 'Orchestrator', terminal: false });
    const t = logTrace(l, STRUCTURAL_OPTIONS);
    expect(t.graph.nodes[5]).toEqual({ id: 'step-5', wiredBy: ['Orchestrator'], argumentFrom: 'step-2' });
    expect(t.graph.edges.filter((e) => e.to === 'step-5')).toEqual([{ from: 'step-2', to: 'step-5' }, { from: 'step-4', to: 'step-5' }]);
    const r = structural(l);
    expect(r.prediction).toEqual({ agent: 'Assistant', step: 2 });
    expect(r.failure).toMatchObject({ step: 5, rule: 'nonzero-exit-code' });
    expect(r.credit.roots[0]).toMatchObject({ nodeId: 'step-5', blamed: 'Assistant', authorNode: 'step-2' });
    // Speaker authorship (the surfaced method's default) still blames whoever printed the error.
    expect(attributeSurfaced(l).prediction).toEqual({ agent: 'ComputerTerminal', step: 5 });
  });

  it('an AG2 team without addressing: the terminal runs the previous speaker\'s code; the code writer is blamed', () => {
    const l = log([
      ['Data_Expert', 'Let us compute it.'],
      ['Python_Expert', code],
      ['Computer_terminal', 'exitcode: 1 (execution failed)\nCode output: KeyError: island'],
      ['Verification_Expert', 'It failed.'],
    ]);
    expect(structural(l).prediction).toEqual({ agent: 'Python_Expert', step: 1 });
    // Code written before an earlier terminal run is not run again: the later run is its caller's.
    const again = log([
      ['Python_Expert', code],
      ['Computer_terminal', 'exitcode: 0 (execution succeeded)\nCode output: (344, 7)'],
      ['Data_Expert', 'Now run: rm -rf /nonexistent && ls missing_dir'],
      ['Computer_terminal', 'exitcode: 2 (execution failed)\nCode output: ls: cannot access'],
    ]);
    expect(teamAuthorship(again)[3]).toMatchObject({ codeStep: null, wiredAt: 2, author: 'Data_Expert', authorStep: 2 });
    expect(structural(again).prediction).toEqual({ agent: 'Data_Expert', step: 2 });
  });

  it('a terminal run with no code -> the caller, at the caller\'s step (a wiring fault: it asked for a run and gave nothing to run)', () => {
    const l = log([
      ['human', 'Analyse the file.'],
      ['Orchestrator (thought)', 'Plan: run a script.'],
      ['Orchestrator (-> ComputerTerminal)', 'Please run the following Python script to analyse the CSV file.'],
      ['Orchestrator (thought)', 'Next speaker ComputerTerminal'],
      ['ComputerTerminal', 'No code block detected in the messages. Please provide a markdown-encoded code block to execute for the original task.'],
      ['Orchestrator (thought)', 'Updated Ledger: ...'],
    ]);
    const a = teamAuthorship(l)[4]!;
    expect(a).toMatchObject({ terminal: true, noCode: true, codeStep: null, wiredAt: 2, wirer: 'Orchestrator', author: 'Orchestrator', authorStep: 2 });
    const r = structural(l);
    expect(r.failure).toMatchObject({ step: 4, rule: 'terminal-no-code', errorCode: 'NO_CODE', failureClass: 'wiring' });
    expect(r.prediction).toEqual({ agent: 'Orchestrator', step: 2 });
    // AG2's wording, and a caller found by order when nothing addressed the terminal.
    const ag2 = log([['Planner', 'Execute the plan.'], ['Computer_terminal', 'No code blocks found in the thread. Please provide at least one markdown-encoded code block to execute.']]);
    expect(structural(ag2).prediction).toEqual({ agent: 'Planner', step: 0 });
    // The terminal ran the caller's own message (a bare command) and it failed: the caller's, at its step.
    const bare = log([
      ['human', 'Unzip it.'],
      ['Orchestrator (-> ComputerTerminal)', 'unzip /workspace/data.zip -d /workspace/out'],
      ['ComputerTerminal', 'The script ran, then exited with Unix exit code: 9\nIts output was:\nunzip:  cannot find zipfile directory'],
    ]);
    expect(structural(bare).prediction).toEqual({ agent: 'Orchestrator', step: 1 });
  });

  it('an instruction naming a missing file, tool or agent: a wiring root of the orchestrator at the instruction; a path the agent guessed stays the agent\'s', () => {
    const told = (instruction: string, reply: string, agent = 'FileSurfer') =>
      structural(log([['human', 'Read the paper.'], [`Orchestrator (-> ${agent})`, instruction], ['Orchestrator (thought)', `Next speaker ${agent}`], [agent, reply]]));
    const missing = told('Please open /workspace/paper_2020.pdf and find the time span.', 'Address: file:///workspace/paper_2020.pdf\nTitle: Error 404\n## Error 404\n\nFile not found: /workspace/paper_2020.pdf');
    expect(missing.failure).toMatchObject({ step: 3, rule: 'impossible-instruction', errorCode: 'MISSING_FILE', failureClass: 'wiring' });
    expect(missing.prediction).toEqual({ agent: 'Orchestrator', step: 1 });
    const guessed = told('Please open the downloaded paper and find the time span.', 'Title: Error 404\n## Error 404\n\nFile not found: /workspace/path_to_paper.pdf');
    expect(guessed.failure).toMatchObject({ rule: 'http-error-status', failureClass: 'execution' });
    expect(guessed.prediction).toEqual({ agent: 'FileSurfer', step: 3 });
    const tool = told('Use the unzip_file tool on data.zip.', 'Error: unknown tool: unzip_file');
    expect(tool.failure).toMatchObject({ errorCode: 'UNKNOWN_TOOL', failureClass: 'wiring' });
    expect(tool.prediction).toEqual({ agent: 'Orchestrator', step: 1 });
    const hop = told('Forward the table to the Verifier agent.', 'Error: unknown recipient: Verifier', 'Assistant');
    expect(hop.failure).toMatchObject({ errorCode: 'UNKNOWN_AGENT' });
    expect(hop.prediction).toEqual({ agent: 'Orchestrator', step: 1 });
  });

  it('impossibleInstruction: the failure must name the missing thing and the instruction must name it too', () => {
    expect(impossibleInstruction("Load 'penguins.csv' and count rows", "FileNotFoundError: [Errno 2] No such file or directory: 'penguins.csv'")).toEqual({ kind: 'file', name: 'penguins.csv', errorCode: 'MISSING_FILE' });
    expect(impossibleInstruction('Print /tmp/a b/notes.txt', 'cat: notes.txt: No such file or directory')).toMatchObject({ name: 'notes.txt' });
    expect(impossibleInstruction('Open 733-Article Text.pdf', 'File not found: /workspace/733-Article%20Text.pdf')).toMatchObject({ kind: 'file' });
    expect(impossibleInstruction('Open the report', "No such file or directory: 'report.pdf'")).toBeNull();
    expect(impossibleInstruction('Use the search tool', 'Error: unknown tool: searcher')).toBeNull();
    expect(impossibleInstruction('Call the searcher tool', 'everything worked')).toBeNull();
  });
});
