import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { choiceMask, chosenSpans } from './choiceMask.ts';

const enumSchema = { enum: ['today', 'tomorrow', 'now'] };
const design = {
  type: 'object',
  properties: {
    steps: {
      type: 'array',
      items: {
        oneOf: [
          { type: 'object', properties: { id: { enum: ['a', 'b'] }, tool: { const: 'weather' }, inputs: { type: 'object', properties: { day: { enum: ['task.request', 'a', 'b'] } } } } },
          { type: 'object', properties: { id: { enum: ['a', 'b'] }, skill: { const: 'sunny_day' }, role: { enum: ['executor'] }, inputs: { type: 'object', properties: { request: { enum: ['task.request', 'a', 'b'] } } } } },
        ],
      },
    },
  },
};

describe('choice mask (grammar-forced tokens left out of the loss)', () => {
  it('an enum answer: the value inside the quotes is chosen, the quotes are forced', () => {
    const text = '"tomorrow"';
    expect(chosenSpans(text, enumSchema)).toEqual([[1, 9]]);
    // tokens: `"` `tom` `orrow` `"` starting at 0, 1, 4, 9
    expect(choiceMask(text, enumSchema, [0, 1, 4, 9])).toEqual([0, 1, 1, 0]);
  });

  it('a design: ids, sources and the key that picks the branch are chosen; const, one-member enum and structure are forced', () => {
    const text = '{"steps":[{"id":"a","skill":"sunny_day","role":"executor","inputs":{"request":"task.request"}}]}';
    const spans = chosenSpans(text, design)!.map(([a, b]) => text.slice(a, b));
    expect(spans).toEqual(['skill', 'a', 'task.request']);
    // One token per character: the chosen characters are exactly those of the three spans.
    const offsets = Array.from(text, (_, i) => i);
    const mask = choiceMask(text, design, offsets)!;
    expect(mask.reduce((a, m) => a + m, 0)).toBe('skill'.length + 'a'.length + 'task.request'.length);
  });

  it('text that is not one JSON value, or nothing chosen: no mask (train on every token)', () => {
    expect(choiceMask('{"steps": [', design, [0, 5])).toBeUndefined();
    expect(choiceMask('"now"', { const: 'now' }, [0, 1, 4])).toBeUndefined();
    // A token after the value (end of generation) is never chosen.
    expect(choiceMask('"now"', enumSchema, [0, 1, 4, 5])).toEqual([0, 1, 0, 0]);
  });

  it('the design grammar of examples/designer-team.yaml: the skill name among several skill branches is chosen (the class of the design), the id and the one role are forced', () => {
    const { graph } = parseWorkflow(readFileSync('examples/designer-team.yaml', 'utf8'), { tools: defaultTools() });
    const schema = graph.nodes.find((n) => n.id === 'design')!.contract!.schema;
    const skill = '{ "steps": [ { "skill": "count_op", "id": "a", "role": "executor", "inputs": { "request": "task.request" } } ] }';
    expect(chosenSpans(skill, schema)!.map(([a, b]) => skill.slice(a, b))).toEqual(['skill', 'count_op', 'task.request']);
    // A tool step: the key picks the tool branches, the tool name picks among them, the source is chosen.
    const tool = '{ "steps": [ { "tool": "math", "id": "a", "inputs": { "op": "task.request" } } ] }';
    expect(chosenSpans(tool, schema)!.map(([a, b]) => tool.slice(a, b))).toEqual(['tool', 'math', 'task.request']);
  });

  it('a list whose length is open: the separator after each item that could have been the last is chosen (`,` one more, `]` stop)', () => {
    const list = { type: 'object', properties: { steps: { type: 'array', items: { const: 'x' }, minItems: 1, maxItems: 3 } } };
    const one = '{ "steps": [ "x" ] }';
    expect(chosenSpans(one, list)).toEqual([[17, 18]]);
    const three = '{ "steps": [ "x", "x" ,"x" ] }';
    // After items 1 and 2 (the `,`s); after item 3 the list is full, so its `]` is forced.
    expect(chosenSpans(three, list)!.map(([a, b]) => three.slice(a, b))).toEqual([',', ',']);
    expect(chosenSpans(three, list)![1]).toEqual([22, 23]);
  });
});
