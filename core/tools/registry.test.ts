import { describe, expect, it } from 'vitest';
import { ToolError, ToolRegistry, checkToolInputs, defaultTools, extractNumberTool, type Tool } from './index.ts';

const echo: Tool = {
  name: 'echo',
  description: 'returns its input',
  inputs: { text: { type: 'string' }, times: { type: 'number', optional: true } },
  output: { type: 'object' },
  run: (inputs) => ({ text: inputs.text }),
};

describe('ToolRegistry', () => {
  it('holds the built-ins by default', () => {
    const reg = defaultTools();
    expect(reg.list().map((t) => t.name)).toEqual(['calculator', 'extract_number', 'weather', 'search', 'math', 'use_tool', 'dispatch', 'retrieve', 'call_tool', 'memory_recall', 'memory_append']);
    expect(reg.has('calculator')).toBe(true);
    expect(reg.get('calculator')?.run({ expression: '2+3*4' }, {})).toEqual({ value: 14, expression: '2+3*4' });
    expect(reg.get('python')).toBeUndefined();
    expect(defaultTools()).not.toBe(reg); // fresh each time
  });

  it('registers, refuses duplicates unless replacing, and checks names', () => {
    const reg = new ToolRegistry([echo]);
    expect(reg.list()).toEqual([echo]);
    expect(() => reg.register(echo)).toThrow(expect.objectContaining({ code: 'DUPLICATE_TOOL' }));
    const echo2 = { ...echo, description: 'v2' };
    reg.register(echo2, { replace: true });
    expect(reg.get('echo')).toBe(echo2);
    expect(() => reg.register({ ...echo, name: 'Bad Name' })).toThrow(ToolError);
    expect(() => new ToolRegistry([echo, echo])).toThrow(expect.objectContaining({ code: 'DUPLICATE_TOOL' }));
  });
});

describe('checkToolInputs', () => {
  it('finds missing, mistyped and unknown ports', () => {
    expect(checkToolInputs(echo, { text: 'hi' })).toEqual([]);
    expect(checkToolInputs(echo, { text: 'hi', times: 2 })).toEqual([]);
    const problems = checkToolInputs(echo, { times: 'two', extra: 1 });
    expect(problems.map((p) => [p.port, p.kind])).toEqual([['text', 'missing'], ['times', 'type'], ['extra', 'unknown']]);
    expect(problems[1]!.message).toMatch(/must be number, got string/);
    expect(checkToolInputs(extractNumberTool, { text: { answer: 3 } })).toEqual([]);
  });
});

describe('extract_number', () => {
  const run = (text: unknown) => extractNumberTool.run({ text }, {});
  it('reads the final number of texts and answer objects', () => {
    expect(run('The answer is 42.')).toEqual({ value: 42 });
    expect(run('so #### 1,234')).toEqual({ value: 1234 });
    expect(run(17)).toEqual({ value: 17 });
    expect(run({ answer: '$1,000' })).toEqual({ value: 1000 });
    expect(run({ steps: ['a', 'b'], total: 9 })).toEqual({ value: 9 });
  });

  it('is BAD_INPUT when there is no number or no text', () => {
    for (const bad of ['no digits here', undefined, null, {}]) {
      expect(() => run(bad), String(bad)).toThrow(expect.objectContaining({ code: 'BAD_INPUT' }));
    }
    expect(() => run('nothing')).toThrow(/no number found in "nothing"/);
  });
});

describe('learn-design tools', () => {
  const reg = defaultTools();
  it('answer with the exact text <tool>:<argument>, the argument on an enum port', () => {
    expect(reg.get('weather')!.run({ day: 'tomorrow' }, {})).toBe('weather:tomorrow');
    expect(reg.get('search')!.run({ kind: ' Books ' }, {})).toBe('search:books');
    expect(reg.get('math')!.run({ op: 'subtract' }, {})).toBe('math:subtract');
    expect(reg.get('weather')!.inputs).toEqual({ day: { type: 'string', enum: ['today', 'tomorrow', 'now'], description: 'One of: today, tomorrow, now.' } });
    expect(reg.get('search')!.inputs.kind!.enum).toEqual(['story', 'word', 'books', 'facts']);
    expect(reg.get('math')!.inputs.op!.enum).toEqual(['add', 'multiply', 'subtract']);
    expect(reg.get('use_tool')!.run({ tool: 'search', kind: 'facts', day: null, op: null }, {})).toBe('search:facts');
    expect(Object.keys(reg.get('use_tool')!.inputs)).toEqual(['tool', 'day', 'kind', 'op']);
  });

  it('refuse a value outside the port enum, a missing one, an argument the tool does not take (BAD_INPUT)', () => {
    expect(() => reg.get('weather')!.run({ day: 'yesterday' }, {})).toThrow(/BAD_INPUT: input 'day' must be one of today, tomorrow, now, got "yesterday"/);
    expect(() => reg.get('math')!.run({}, {})).toThrow(expect.objectContaining({ code: 'BAD_INPUT', tool: 'math' }));
    expect(() => reg.get('search')!.run({ kind: 3 }, {})).toThrow(/must be a string, got number/);
    expect(() => reg.get('use_tool')!.run({ tool: 'search', day: 'today', kind: null }, {})).toThrow(/BAD_INPUT: search needs input 'kind' \(story, word, books, facts\), got null/);
    expect(() => reg.get('use_tool')!.run({ tool: 'search', kind: 'today' }, {})).toThrow(/input 'kind' must be one of story, word, books, facts, got "today"/);
    expect(() => reg.get('use_tool')!.run({ tool: 'map', day: 'today' }, {})).toThrow(/input 'tool' must be one of weather, search, math/);
    const controller = new AbortController();
    controller.abort();
    expect(() => reg.get('weather')!.run({ day: 'now' }, { signal: controller.signal })).toThrow(expect.objectContaining({ code: 'ABORTED' }));
  });

  it('dispatch calls the tool an argument belongs to, passes a tool answer through, refuses anything else', () => {
    const dispatch = reg.get('dispatch')!;
    expect(dispatch.run({ call: 'tomorrow' }, {})).toBe('weather:tomorrow');
    expect(dispatch.run({ call: ' Books' }, {})).toBe('search:books');
    expect(dispatch.run({ call: 'subtract' }, {})).toBe('math:subtract');
    expect(dispatch.run({ call: 'search:facts' }, {})).toBe('search:facts');
    expect(() => dispatch.run({ call: 'search:today' }, {})).toThrow(/BAD_INPUT: input 'call' must be an argument of weather, search, math or a tool's answer, got "search:today"/);
    expect(() => dispatch.run({ call: 'soon' }, {})).toThrow(expect.objectContaining({ code: 'BAD_INPUT', tool: 'dispatch' }));
    expect(() => dispatch.run({ call: 3 }, {})).toThrow(/must be a string, got number/);
    expect(() => dispatch.run({}, {})).toThrow(/input 'call' is missing/);
  });

  it('checkToolInputs reports a value outside a port enum as a type problem', () => {
    expect(checkToolInputs(reg.get('weather')!, { day: 'now' })).toEqual([]);
    expect(checkToolInputs(reg.get('weather')!, { day: 'soon' })).toEqual([{ port: 'day', kind: 'type', message: `tool 'weather' input 'day' must be one of today, tomorrow, now, got "soon"` }]);
  });
});
