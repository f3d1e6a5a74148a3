import { describe, expect, it } from 'vitest';
import { jsonSchemaValidator } from '../workflow/jsonSchema.ts';
import { repairJson } from './repair.ts';
import { splitReply } from './thinking.ts';

const plan = jsonSchemaValidator.compile({ type: 'object', properties: { plan: { type: 'string' } }, required: ['plan'], additionalProperties: false });
const valid = (v: unknown) => plan(v) === true;

describe('repairJson: the JSON value a reply wrote inside prose or a fence', () => {
  it('takes a fenced block, with or without a language', () => {
    expect(repairJson('Here it is:\n```json\n{"plan": "add"}\n```\nDone.', valid)).toEqual({ ok: true, value: { plan: 'add' }, kind: 'fenced' });
    expect(repairJson('```\n{"plan": "x"}\n```', valid)).toEqual({ ok: true, value: { plan: 'x' }, kind: 'fenced' });
  });
  it('takes an object written in a sentence, braces inside strings honoured', () => {
    expect(repairJson('Sure! {"plan": "use {x} and ]"} is my answer.', valid)).toEqual({ ok: true, value: { plan: 'use {x} and ]' }, kind: 'embedded' });
  });
  it('skips a fenced draft that is not valid and takes the next valid value', () => {
    const text = '```python\ndef f(): pass\n```\nThe JSON: ```json\n{"plan": 3}\n``` no, this: {"plan": "three"}';
    expect(repairJson(text, valid)).toEqual({ ok: true, value: { plan: 'three' }, kind: 'embedded' });
  });
  it('says what it found when nothing is valid, and nothing when there is no JSON', () => {
    expect(repairJson('```json\n{"plan": 3}\n```', valid)).toEqual({ ok: false, invalid: { plan: 3 }, kind: 'fenced' });
    expect(repairJson('I think the plan is to add.', valid)).toEqual({ ok: false });
    expect(repairJson('{"plan": "cut off', valid)).toEqual({ ok: false });
  });
});

describe('splitReply: thinking apart from the answer for every provider', () => {
  it('a <think> block at the start, an open prefill, and a server reasoning_content', () => {
    expect(splitReply('<think>draft\n```python\nx\n```</think>\n\nfinal')).toEqual({ thinking: 'draft\n```python\nx\n```', answer: 'final' });
    // The server's template opened the block: the text holds </think> and no <think>.
    expect(splitReply('I add them.\n</think>\n4')).toEqual({ thinking: 'I add them.', answer: '4' });
    expect(splitReply('4', { reasoning: 'I add them.' })).toEqual({ thinking: 'I add them.', answer: '4' });
    expect(splitReply('<think>b</think>4', { reasoning: 'a' })).toEqual({ thinking: 'a\n\nb', answer: '4' });
  });
  it('a cut-off block is all thinking; text without a block is all answer; a later <think> is left in', () => {
    expect(splitReply('<think>still going')).toEqual({ thinking: 'still going', answer: '' });
    expect(splitReply('just 4')).toEqual({ answer: 'just 4' });
    expect(splitReply('4 <think>x</think>')).toEqual({ answer: '4 <think>x</think>' });
    expect(splitReply('prefilled </think>4', { opened: true })).toEqual({ thinking: 'prefilled', answer: '4' });
  });
});
