import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../random.ts';
import { jsonSchemaValidator } from '../workflow/jsonSchema.ts';
import { schemaProblems } from '../workflow/schemaSupport.ts';
import { designJson, parseMassDesign } from './design.ts';
import { EDIT_TOKENS } from './editOptimizer.ts';
import { applyEdit, EditError, editOptions, editSchema, editText, longestEditChars, readEdit, type MassEdit } from './edits.ts';
import { DESIGN_EDIT_MENU } from './learnDesignFamily.ts';
import { ldCatalogue, ldFamily, ldFirstDesign } from './learnDesign.fixture.ts';
import type { MassDesign } from './types.ts';

const family = ldFamily;
const catalogue = ldCatalogue;
const first = ldFirstDesign();
const short = (d: MassDesign) => ({
  agents: d.agents.map((a) => `${a.agent_id}[${a.contract.checks.join(',')}] ${a.instruction}`),
  hops: d.hops.map((h) => `${h.agent_id}${h.reads.length ? `<${h.reads.join(',')}` : ''}${h.redelegate ? ` x${h.redelegate.max}` : ''}`),
});

/** A value the grammar can produce: a random oneOf branch, a random enum value (what a sampler decoding under it can write). */
function sample(schema: Record<string, unknown>, r: () => number): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[Math.floor(r() * schema.enum.length)];
  if (Array.isArray(schema.oneOf)) return sample(schema.oneOf[Math.floor(r() * schema.oneOf.length)] as Record<string, unknown>, r);
  const props = schema.properties as Record<string, Record<string, unknown>>;
  return Object.fromEntries(Object.entries(props).map(([k, s]) => [k, sample(s, r)]));
}

describe('the MASS edit language', () => {
  it('applies each op as written (checked by hand on version 0 of learn-design)', () => {
    const before = designJson(first);
    expect(short(first)).toEqual({ agents: ['picker[] Name the tool the request needs.', 'filler[] Give the tool argument.'], hops: ['picker', 'filler'] });
    const cases: Array<[MassEdit, ReturnType<typeof short>]> = [
      [{ op: 'add_check', agent: 'picker', check: 'tool_fits_request' }, { agents: ['picker[tool_fits_request] Name the tool the request needs.', 'filler[] Give the tool argument.'], hops: ['picker', 'filler'] }],
      [{ op: 'retry', hop: 2, max: 2 }, { agents: ['picker[] Name the tool the request needs.', 'filler[] Give the tool argument.'], hops: ['picker', 'filler x2'] }],
      [{ op: 'move_hop', from: 2, to: 1 }, { agents: ['picker[] Name the tool the request needs.', 'filler[] Give the tool argument.'], hops: ['filler', 'picker'] }],
      [{ op: 'insert_hop', at: 3, agent: 'picker', reads: 'filler' }, { agents: ['picker[] Name the tool the request needs.', 'filler[] Give the tool argument.'], hops: ['picker', 'filler', 'picker<filler'] }],
      [{ op: 'remove_hop', at: 1 }, { agents: ['picker[] Name the tool the request needs.', 'filler[] Give the tool argument.'], hops: ['filler'] }],
      [{ op: 'set_reads', hop: 2, reads: 'picker' }, { agents: ['picker[] Name the tool the request needs.', 'filler[] Give the tool argument.'], hops: ['picker', 'filler<picker'] }],
      [{ op: 'set_instruction', agent: 'filler', instruction: 'Copy the word that names the argument.' }, { agents: ['picker[] Name the tool the request needs.', 'filler[] Copy the word that names the argument.'], hops: ['picker', 'filler'] }],
    ];
    for (const [edit, want] of cases) expect(short(applyEdit(first, edit)), editText(edit)).toEqual(want);
    const two = applyEdit(first, { op: 'add_check', agent: 'picker', check: 'tool_fits_request' });
    expect(short(applyEdit(two, { op: 'replace_check', agent: 'picker', from: 'tool_fits_request', to: 'non_empty' })).agents[0]).toBe('picker[non_empty] Name the tool the request needs.');
    expect(short(applyEdit(two, { op: 'remove_check', agent: 'picker', check: 'tool_fits_request' }))).toEqual(short(first));
    expect(short(applyEdit(applyEdit(first, { op: 'retry', hop: 1, max: 1 }), { op: 'retry', hop: 1, max: 0 }))).toEqual(short(first));
    // The input is not changed; a bad edit is refused with what is wrong.
    expect(designJson(first)).toBe(before);
    expect(() => applyEdit(first, { op: 'remove_check', agent: 'picker', check: 'non_empty' })).toThrow(EditError);
    expect(() => applyEdit(first, { op: 'retry', hop: 3, max: 1 })).toThrow(/hop 3 is not a hop of the design \(1\.\.2\)/);
    expect(() => applyEdit(first, { op: 'add_check', agent: 'nobody', check: 'non_empty' })).toThrow(/no agent "nobody"/);
  });

  it('guard: the check and retries on every hop calling the agent, as one edit; offered only by a menu with guard', () => {
    const g: MassEdit = { op: 'guard', agent: 'picker', check: 'tool_fits_request' };
    expect(editText(g)).toBe('guard picker tool_fits_request (retry 2)');
    expect(short(applyEdit(first, g))).toEqual({ agents: ['picker[tool_fits_request] Name the tool the request needs.', 'filler[] Give the tool argument.'], hops: ['picker x2', 'filler'] });
    // Two picker hops: both retried; a hop already retried twice stays; another agent's hop is untouched.
    const twice = applyEdit(applyEdit(first, { op: 'insert_hop', at: 3, agent: 'picker', reads: null }), { op: 'retry', hop: 2, max: 1 });
    expect(short(applyEdit(twice, g)).hops).toEqual(['picker x2', 'filler x1', 'picker x2']);
    // The same design as add_check then retry hop 1 max 2.
    expect(designJson(applyEdit(first, g))).toBe(designJson(applyEdit(applyEdit(first, { op: 'add_check', agent: 'picker', check: 'tool_fits_request' }), { op: 'retry', hop: 1, max: 2 })));
    expect(() => applyEdit(applyEdit(first, g), g)).toThrow(/picker already has tool_fits_request/);
    // A hop that re-delegates to another agent keeps that hand-off.
    const handOff = { ...first, hops: first.hops.map((h, i) => (i === 0 ? { ...h, redelegate: { to: 'filler', max: 1 } } : h)) };
    expect(applyEdit(handOff, g).hops[0]!.redelegate).toEqual({ to: 'filler', max: 1 });
    const ops = (menu: typeof DESIGN_EDIT_MENU) => editOptions(first, menu, catalogue).filter((o) => o.edit.op === 'guard').map((o) => editText(o.edit));
    // learn-design's menu offers it: 2 agents x the checks that validate on each.
    expect(ops(DESIGN_EDIT_MENU)).toContain('guard picker tool_fits_request (retry 2)');
    expect(ops(DESIGN_EDIT_MENU)).toContain('guard filler argument_in_request (retry 2)');
    expect(ops({ checks: DESIGN_EDIT_MENU.checks, instructions: DESIGN_EDIT_MENU.instructions })).toEqual([]);
  });

  it('offers only edits whose design validates and is new', () => {
    const options = editOptions(first, DESIGN_EDIT_MENU, catalogue);
    const texts = options.map((o) => editText(o.edit));
    expect(texts).toContain('add_check picker tool_fits_request');
    expect(texts).toContain('set_reads hop 2: picker');
    expect(texts).toContain('retry hop 1 max 2');
    // Hop 1 reading picker reads an agent no earlier hop called (READS_LATER); a read of nobody is no change.
    expect(texts).not.toContain('set_reads hop 1: picker');
    expect(texts).not.toContain('set_reads hop 2: none');
    // No removal of a check the agent lacks, no retry beyond 2 or at the current 0.
    expect(texts.some((t) => t.startsWith('remove_check') || t.startsWith('replace_check'))).toBe(false);
    expect(texts).not.toContain('retry hop 1 max 0');
    // Every option's design passes the validator, and none repeats the design or another option.
    for (const o of options) expect(parseMassDesign(JSON.parse(designJson(o.design)), catalogue).ok).toBe(true);
    expect(new Set(options.map((o) => designJson(o.design))).size).toBe(options.length);
    expect(options.some((o) => designJson(o.design) === designJson(first))).toBe(false);
    // A design already tried is not offered again.
    const tried = applyEdit(first, { op: 'add_check', agent: 'picker', check: 'tool_fits_request' });
    expect(editOptions(first, DESIGN_EDIT_MENU, catalogue, undefined, [tried]).map((o) => editText(o.edit))).not.toContain('add_check picker tool_fits_request');
  });

  it('every proposal the grammar can produce parses into a valid new design (random walks of 30 sampled edits, 3 seeds)', () => {
    let n = 0;
    for (let seed = 1; seed <= 3; seed++) {
      const r = mulberry32(seed);
      let design = first;
      const tried: MassDesign[] = [first];
      for (let step = 0; step < 30; step++) {
        const options = editOptions(design, DESIGN_EDIT_MENU, catalogue, undefined, tried);
        if (!options.length) break;
        const schema = editSchema(options);
        expect(schemaProblems(schema)).toEqual([]);
        const reply = sample(schema, r);
        expect(jsonSchemaValidator.validate(schema, reply), JSON.stringify(reply)).toBe(true);
        const chosen = readEdit(JSON.parse(JSON.stringify(reply)), options);
        expect(chosen, JSON.stringify(reply)).toBeDefined();
        const parsed = parseMassDesign(JSON.parse(designJson(chosen!.design)), catalogue);
        expect(parsed.ok).toBe(true);
        expect(designJson(applyEdit(design, chosen!.edit))).toBe(designJson(chosen!.design));
        expect(tried.map(designJson)).not.toContain(designJson(chosen!.design));
        design = chosen!.design;
        tried.push(design);
        n++;
      }
    }
    expect(n).toBe(90);
  });

  it('rejects a reply outside the grammar, and the longest edit fits the token budget', () => {
    const options = editOptions(first, DESIGN_EDIT_MENU, catalogue);
    expect(readEdit({ edit: { op: 'add_check', agent: 'picker' } }, options)).toBeUndefined();
    expect(readEdit({ edit: { op: 'retry', hop: 1, max: 3 } }, options)).toBeUndefined();
    expect(readEdit({ edit: { agent: 'picker', check: 'tool_fits_request', op: 'add_check' } }, options)?.edit).toEqual({ op: 'add_check', agent: 'picker', check: 'tool_fits_request' });
    // The longest edit of the menu, as compact JSON (stories260K: about a token a character), with room for whitespace.
    // {"edit":{"op":"set_instruction","agent":"picker","instruction":"Pick weather for a day, math for a sum."}}
    expect(longestEditChars(options)).toBe(106);
    expect(longestEditChars(options)).toBeLessThan(EDIT_TOKENS * 0.6);
  });
});
