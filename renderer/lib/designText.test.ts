import { describe, expect, it } from 'vitest';
import { designText, formatDocPath, locatePath } from './designText.ts';

const doc = { steps: [{ id: 'a', skill: 'expression', role: 'executor', inputs: { question: 'task.question' } }, { id: 'b', tool: 'calculator', inputs: { expression: 'c' } }] };

describe('design text', () => {
  it('pretty-prints the compiled document of a JSON notation; shows code and unparsable text as written', () => {
    const shown = designText({ notation: 'steps', text: JSON.stringify(doc), document: doc });
    expect(shown.source).toBe('document');
    expect(shown.text.split('\n')[0]).toBe('{');
    expect(shown.text).toContain('\n      "id": "b",\n');
    expect(designText({ notation: 'steps', text: '{"steps": [' })).toEqual({ text: '{"steps": [', source: 'written', note: 'The completion did not parse as a design; it is shown as written.' });
    expect(designText({ notation: 'code', text: 'raw', document: 'const a = x();' })).toEqual({ text: 'const a = x();', source: 'written' });
  });

  it('locates a path as its key: value pair in the pretty JSON', () => {
    const { text } = designText({ notation: 'steps', text: '', document: doc });
    const r = locatePath(text, ['steps', 1, 'inputs', 'expression'])!;
    expect(text.slice(r.start, r.end)).toBe('"expression": "c"');
    expect(r.depth).toBe(4);
    const item = locatePath(text, ['steps', 1])!;
    expect(text.slice(item.start, item.end)).toMatch(/^\{\n\s+"id": "b",[\s\S]*"c"\n\s+\}\n\s+\}$/);
    const id = locatePath(text, ['steps', 1, 'id'])!;
    expect(text.slice(id.start, id.end)).toBe('"id": "b"');
  });

  it('falls back to the longest present prefix, and to nothing for text that does not parse', () => {
    const { text } = designText({ notation: 'steps', text: '', document: doc });
    const r = locatePath(text, ['steps', 1, 'inputs', 'day'])!;
    expect(r.depth).toBe(3);
    expect(text.slice(r.start, r.end)).toMatch(/^"inputs": \{\n\s+"expression": "c"\n\s+\}$/);
    expect(locatePath(text, ['nodes', 0])).toBeUndefined();
    expect(locatePath('{"steps": [', ['steps'])).toBeUndefined();
    expect(locatePath('steps:\n  - id: a\n', ['steps', 0, 'id'])).toMatchObject({ depth: 3 });
  });

  it('writes paths as the messages do', () => {
    expect(formatDocPath(['steps', 1, 'inputs', 'expression'])).toBe('steps[1].inputs.expression');
    expect(formatDocPath([])).toBe('(the whole design)');
  });
});
