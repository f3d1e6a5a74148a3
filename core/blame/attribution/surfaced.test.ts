import { describe, expect, it } from 'vitest';
import { attributeSurfaced, HARNESS_CRASH_RULE, logTrace, surfaceFailure, SURFACING_RULES } from './surfaced.ts';
import type { LogStep, WhoAndWhenLog } from './types.ts';

const rule = (id: string) => {
  const r = SURFACING_RULES.find((x) => x.id === id);
  if (!r) throw new Error(`no rule ${id}`);
  return r;
};
const at = (content: string, agent = 'Assistant', index = 3) => surfaceFailure({ index, agent, content });

function log(steps: Array<[string, string]>, label: [string, number] = ['A', 1]): WhoAndWhenLog {
  const s: LogStep[] = steps.map(([agent, content], index) => ({ index, agent, rawAgent: agent, content }));
  return {
    id: 'x',
    file: '/tmp/x.json',
    variant: 'hand-crafted',
    question: 'q',
    groundTruth: 'g',
    isCorrect: false,
    steps: s,
    agents: [...new Set(s.map((x) => x.agent))],
    label: { agent: label[0], rawAgent: label[0], step: label[1], reason: '' },
  };
}

describe('surfacing rules, one by one', () => {
  it('nonzero-exit-code: any reported exit code other than 0', () => {
    const r = rule('nonzero-exit-code');
    expect(r.match('exitcode: 1 (execution failed)\nCode output: boom')).toBe('exitcode: 1');
    expect(r.match('The script ran, then exited with Unix exit code: 2\nIts output was:')).toBe('exit code: 2');
    expect(r.match('The Unix exit code was: 127.')).toBe('exit code was: 127');
    expect(r.match('process finished, returncode=-9')).toBe('returncode=-9');
    expect(r.match('exitcode: 0 (execution succeeded)')).toBeNull();
    expect(r.match('The script ran, then exited with Unix exit code: 0')).toBeNull();
    expect(r.match('we should check the exit code next time')).toBeNull();
  });

  it('python-traceback: a line starting with the traceback header', () => {
    const r = rule('python-traceback');
    expect(r.match('Running...\nTraceback (most recent call last):\n  File "x.py", line 1\nKeyError: 3')).toBe('Traceback (most recent call last):');
    expect(r.match('>>> Traceback (most recent call last):')).not.toBeNull();
    expect(r.match('The output mentions a Traceback (most recent call last): in the middle of prose')).toBeNull();
    expect(r.match('no traceback here')).toBeNull();
  });

  it('error-line: a line starting with an error label or an exception name', () => {
    const r = rule('error-line');
    expect(r.match('Audio Transcript:\nError. Could not transcribe this audio.')).toBe('Error. Could not transcribe this audio.');
    expect(r.match('Error: file not found')).toBe('Error: file not found');
    expect(r.match('  ValueError: invalid literal for int()')).toContain('ValueError: invalid literal');
    expect(r.match('requests.exceptions.HTTPError: 500')).toContain('requests.exceptions.HTTPError');
    expect(r.match('ERROR: could not install')).not.toBeNull();
    expect(r.match('ConnectionException: reset by peer')).not.toBeNull();
    expect(r.match('Report a map error\nTerms')).toBeNull();
    expect(r.match('### Error message:\nsee below')).toBeNull();
    expect(r.match('The error: it was my fault')).toBeNull();
    expect(r.match('Errors are common.\nError handling is hard')).toBeNull();
    expect(r.match('"reason": "ValueError: happened earlier"')).toBeNull();
  });

  it('http-error-status: 4xx/5xx statuses in their usual spellings, not other numbers', () => {
    const r = rule('http-error-status');
    expect(r.match('Title: Error 404\n## Error 404')).toBe('Error 404');
    expect(r.match('urllib.error.HTTPError: HTTP Error 403: Forbidden')).toBe('HTTP Error 403');
    expect(r.match('HTTP/1.1 503 Service Unavailable')).toBe('HTTP/1.1 503');
    expect(r.match('request returned status code: 429')).toBe('status code: 429');
    expect(r.match('404 Client Error: Not Found for url: https://x')).not.toBeNull();
    expect(r.match('<title>404 Not Found</title>')).toBe('404 Not Found');
    expect(r.match('403 Forbidden')).toBe('403 Forbidden');
    expect(r.match('HTTP 200 OK')).toBeNull();
    expect(r.match('The population grew by 404 people in 2019')).toBeNull();
    expect(r.match('Route 500 closes at 9 pm')).toBeNull();
  });

  it('browser-error-page: chrome-error:// and net::ERR_ codes', () => {
    const r = rule('browser-error-page');
    expect(r.match('Here is a screenshot of [www.x.com](chrome-error://chromewebdata/).')).toContain('chrome-error://chromewebdata/');
    expect(r.match('page.goto: net::ERR_NAME_NOT_RESOLVED at https://x')).toBe('net::ERR_NAME_NOT_RESOLVED');
    expect(r.match('I browsed chrome settings and found an error icon')).toBeNull();
  });

  it('tool-error-report: a line opening with "encountered an error", "failed to <verb>" or "timed out" after a short subject', () => {
    const r = rule('tool-error-report');
    expect(r.match('File surfer encountered an error decoding JSON arguments: Expecting value')).toContain('encountered an error');
    expect(r.match('Failed to load page https://x')).toBe('Failed to load page https://x');
    expect(r.match('Request timed out after 30 s')).toBe('Request timed out after 30 s');
    expect(r.match('Execution failed: no module named x')).not.toBeNull();
    // a coordinator's ledger line or long prose about an earlier failure is not one
    expect(r.match('  "reason": "The previous download failed to load the page",')).toBeNull();
    expect(r.match('Since automated transcription failed, can you summarize a manual process?')).toBeNull();
    expect(r.match('We tried the page several times before and in the end the search timed out')).toBeNull();
  });

  it('refusal: an opening apology that declines in its first sentence', () => {
    const r = rule('refusal');
    expect(r.match("I'm sorry, but I can't assist with that.")).not.toBeNull();
    expect(r.match('I apologize, but I am unable to browse the web.')).not.toBeNull();
    expect(r.match('Sorry, I cannot open local files.')).not.toBeNull();
    expect(r.match("Here is the plan. I'm sorry, but I can't do step 3.")).toBeNull();
    expect(r.match("I'm sorry for the delay. Here are the results you asked for; I cannot wait to see more.")).toBeNull();
    expect(r.match('Since I cannot browse directly, you can go to the Fidelity screener.')).toBeNull();
  });
});

describe('surfaceFailure', () => {
  it('the task poser (human) never fails', () => {
    expect(surfaceFailure({ index: 0, agent: 'human', content: 'Error: this text is the task' })).toBeNull();
    expect(at('Error: x', 'Human')).toBeNull();
  });

  it('names the first matching rule, class execution, with evidence', () => {
    expect(at('exitcode: 1 (execution failed)\nTraceback (most recent call last):\nKeyError: 1')).toEqual({
      step: 3,
      rule: 'nonzero-exit-code',
      errorCode: 'NONZERO_EXIT',
      failureClass: 'execution',
      evidence: 'exitcode: 1',
    });
    expect(at('all fine, 3 results found')).toBeNull();
  });

  it('text copied from the task statement is not a failure of the step that repeats it', () => {
    const task = "Listen to the file.\n\nHere are the file's contents:\n\nError. Could not transcribe this audio.\n";
    const step = { index: 1, agent: 'Orchestrator', content: `We are working to address the following user request:\n\n${task.trim()}\n\nTo answer this request we have assembled a team.` };
    expect(surfaceFailure(step)?.rule).toBe('error-line');
    expect(surfaceFailure(step, { quoted: [task.trim()] })).toBeNull();
  });

  it('a message reporting exit code 0 surfaces no execution failure (tracebacks and errors in it are program output)', () => {
    expect(at('The script ran, then exited with Unix exit code: 0\nIts output was:\nTraceback (most recent call last):\nAttributeError: x')).toBeNull();
    expect(at('exitcode: 0 (execution succeeded)\nError: printed by the program')).toBeNull();
  });

  it('a harness crash block is infrastructure; an error before it still counts as execution', () => {
    const crash = '\nError processing publish message\nTraceback (most recent call last):\n  File "/usr/lib/autogen_core/x.py", line 1\nopenai.BadRequestError: Error code: 400';
    const only = at(`Page text, all good.${crash}`, 'WebSurfer');
    expect(only?.rule).toBe(HARNESS_CRASH_RULE);
    expect(only?.failureClass).toBe('infrastructure');
    expect(surfaceFailure({ index: 3, agent: 'WebSurfer', content: `Page text.${crash}` }, { harnessCrash: 'execution' })?.failureClass).toBe('execution');
    const both = at(`Title: Error 404\nFile not found${crash}`, 'FileSurfer');
    expect(both?.rule).toBe('http-error-status');
    expect(both?.failureClass).toBe('execution');
  });
});

describe('surfaced attribution through computeCredit', () => {
  it('builds one node per message, sequential edges, runBy = agent, wiredBy = human', () => {
    const t = logTrace(log([['human', 'task'], ['A', 'ok'], ['B', 'Error: x']]));
    expect(t.graph.nodes).toEqual([
      { id: 'step-0', wiredBy: ['human'], runBy: 'human' },
      { id: 'step-1', wiredBy: ['human'], runBy: 'A' },
      { id: 'step-2', wiredBy: ['human'], runBy: 'B' },
    ]);
    expect(t.graph.edges).toEqual([{ from: 'step-0', to: 'step-1' }, { from: 'step-1', to: 'step-2' }]);
    expect(t.events.map((e) => e.status)).toEqual(['ok', 'ok', 'failed']);
    expect(t.events[2]).toMatchObject({ failureClass: 'execution', errorCode: 'ERROR_LINE' });
  });

  it('predicts the earliest root failure; a failure right after a failure is a cascade', () => {
    const a = attributeSurfaced(
      log([
        ['human', 'task'],
        ['A', 'fine'],
        ['B', 'exitcode: 1'],
        ['C', 'Error: because B failed'],
        ['A', 'fine'],
        ['C', 'Error: again'],
      ]),
    );
    expect(a.prediction).toEqual({ agent: 'B', step: 2 });
    expect(a.failure?.rule).toBe('nonzero-exit-code');
    expect(a.credit.roots.map((r) => r.nodeId)).toEqual(['step-2', 'step-5']);
    expect(a.credit.cascades.map((c) => c.nodeId)).toEqual(['step-3']);
  });

  it('infrastructure roots are blamed on nobody and never predicted; no failure -> no prediction', () => {
    const crash = 'x\nError processing publish message\nTraceback (most recent call last):\nboom';
    const a = attributeSurfaced(log([['human', 't'], ['A', crash], ['B', 'fine'], ['C', 'Error: late']]));
    expect(a.credit.infrastructure).toEqual(['step-1']);
    expect(a.prediction).toEqual({ agent: 'C', step: 3 });
    expect(attributeSurfaced(log([['human', 't'], ['A', crash]])).prediction).toBeNull();
    expect(attributeSurfaced(log([['human', 't'], ['A', crash]]), { harnessCrash: 'execution' }).prediction).toEqual({ agent: 'A', step: 1 });
    expect(attributeSurfaced(log([['human', 't'], ['A', 'all good']])).prediction).toBeNull();
  });
});
