import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { branchingSpans, choiceAllowed, choiceMask, chosenSpans } from './choiceMask.ts';

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
  it('an enum answer: the characters where the members branch are chosen; the quotes and the forced rest are not', () => {
    const text = '"tomorrow"';
    // `t` (today/tomorrow vs now) and `m` (tomorrow vs today); after `tom` only tomorrow is left.
    expect(chosenSpans(text, enumSchema)).toEqual([[1, 2], [3, 4]]);
    // tokens: `"` `tom` `orrow` `"` starting at 0, 1, 4, 9
    expect(choiceMask(text, enumSchema, [0, 1, 4, 9])).toEqual([0, 1, 0, 0]);
    // `now` is decided by its first character.
    expect(chosenSpans('"now"', enumSchema)).toEqual([[1, 2]]);
  });

  it('branching characters: a shared first character leaves the second chosen; a member that is a prefix of another makes the closing quote chosen', () => {
    const names = ['sunny_day', 'story_kind', 'count_op'];
    expect(branchingSpans('sunny_day', names, 1, '"sunny_day"')).toEqual([[1, 3]]);
    expect(branchingSpans('count_op', names, 1, '"count_op"')).toEqual([[1, 2]]);
    expect(branchingSpans('now', ['now', 'nowadays'], 1, '"now"')).toEqual([[4, 5]]);
    // Not among the choices (or written with escapes): chosen whole.
    expect(branchingSpans('later', ['now', 'today'], 1, '"later"')).toEqual([[1, 6]]);
  });

  it('a design: the branching characters of ids, sources and the key that picks the branch are chosen; const, one-member enum and structure are forced', () => {
    const text = '{"steps":[{"id":"a","skill":"sunny_day","role":"executor","inputs":{"request":"task.request"}}]}';
    const spans = chosenSpans(text, design)!;
    // The `s` of "skill" (against "tool"), the id `a` (against `b`), the `t` of task.request (against a, b).
    expect(spans.map(([a, b]) => text.slice(a, b))).toEqual(['s', 'a', 't']);
    expect(spans[0]).toEqual([text.indexOf('"skill"') + 1, text.indexOf('"skill"') + 2]);
    // One token per character: three chosen tokens.
    const offsets = Array.from(text, (_, i) => i);
    const mask = choiceMask(text, design, offsets)!;
    expect(mask.reduce((a, m) => a + m, 0)).toBe(3);
  });

  it('what the grammar allowed at a choice: every token that continues the value toward one of its strings', () => {
    // Pieces: 0 `"`, 1 `t`, 2 `to`, 3 `n`, 4 `now`, 5 `m`, 6 `orrow`, 7 `x`, 8 `day`, 9 `om`, 10 `o`, 11 `ow"`.
    const pieces = ['"', 't', 'to', 'n', 'now', 'm', 'orrow', 'x', 'day', 'om', 'o', 'ow"'];
    const text = '"tomorrow"';
    // Tokens `"` `t` `om` `orrow` `"` (ids 0 1 9 6 0) at 0 1 2 4 9.
    const allowed = choiceAllowed(text, enumSchema, [0, 1, 2, 4, 9], [0, 1, 9, 6, 0], pieces)!;
    // `t`: the start of today/tomorrow or now (t, to, n, now); `om`: after `t`, tomorrow's `o`/`om` or today's `o`.
    expect(allowed).toEqual([null, [1, 2, 3, 4], [9, 10], null, null]);
    // A token that runs to the closing quote is allowed where the value may end.
    expect(choiceAllowed('"now"', enumSchema, [0, 1, 2], [0, 3, 11], pieces)).toEqual([null, [1, 2, 3, 4], null]);
    // No pieces, or nothing restricted: undefined.
    expect(choiceAllowed(text, enumSchema, [0, 1, 2, 4, 9], [0, 1, 9, 6, 0], [])).toBeUndefined();
    expect(choiceAllowed('"now"', { const: 'now' }, [0, 1, 4], [0, 4, 0], pieces)).toBeUndefined();
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
    const skill = '{ "steps": [ { "skill": "op_arg", "id": "a", "role": "executor", "inputs": { "request": "task.request" } } ] }';
    // The key's `s` (skill, not tool), the name's `o` (op_arg, not day_arg or kind_arg), the source's `t`.
    const spans = chosenSpans(skill, schema)!;
    expect(spans.map(([a, b]) => skill.slice(a, b))).toEqual(['s', 'o', 't']);
    expect(spans[1]).toEqual([skill.indexOf('op_arg'), skill.indexOf('op_arg') + 1]);
    // A tool step: the key picks the tool branches, the tool name's first character picks among them, the source is chosen.
    const tool = '{ "steps": [ { "tool": "math", "id": "a", "inputs": { "op": "task.request" } } ] }';
    expect(chosenSpans(tool, schema)!.map(([a, b]) => tool.slice(a, b))).toEqual(['t', 'm', 't']);
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
