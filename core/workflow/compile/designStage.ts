/**
 * The design stage of a workflow document (`design:`; docs/designer.md): the catalogue checked
 * against the document, the design node added, and the grammar the designer decodes under.
 * FloWright's generator: an upstream role that writes and wires the workflow for each task.
 */
import { asRoleName, type RoleName } from '../../ids.ts';
import type { JsonSchema } from '../../model/provider.ts';
import { CheckRegistry } from '../checks.ts';
import type { DesignStage, DocPath } from '../graph.ts';
import type { WorkflowDoc } from '../spec.ts';
import { templateRefs } from '../template.ts';
import { issueList, type CompileOptions } from './types.ts';
import type { SpecIssue } from '../errors.ts';

/** Defaults of a design stage's budget and output. */
export const DESIGN_DEFAULTS = { id: 'design', maxNodes: 8, maxLoops: 1, maxIterations: 3, maxTokens: 256 } as const;

/** The notation key(s) a design in each notation writes its nodes under. */
export const NOTATION_KEYS = { steps: ['steps', 'answer'], graph: ['nodes', 'edges', 'answer'], states: ['states', 'transitions', 'start', 'terminal', 'answer'], code: ['code'] } as const;

/** Short node ids a grammar-bound design may use, in order (`a`, `b`, ...). */
export function designIds(maxNodes: number): string[] {
  return Array.from({ length: maxNodes }, (_, i) => (i < 26 ? String.fromCharCode(97 + i) : `n${i + 1}`));
}

/**
 * Reads `doc.design` into a DesignStage and returns the document with the design node prepended
 * to its node list (`steps: [design]` when the document has no nodes of its own), ready for the
 * ordinary compile. The design node runs `design.role` on `design.prompt` (`{{catalogue}}`
 * replaced by `catalogueText`) under `designGrammar` (JSON notations; `code` decodes free text).
 *
 * Issues (located under `design`): UNKNOWN_ROLE (the role, or a catalogue role, is not defined;
 * a catalogue naming the designer itself), UNKNOWN_TOOL, UNKNOWN_SKILL, UNKNOWN_CHECK, SCHEMA
 * (`hops` beside a design stage). Pure.
 */
export function withDesignNode(doc: WorkflowDoc, opts: CompileOptions): { doc: WorkflowDoc; stage: DesignStage; issues: SpecIssue[] } {
  const { issues, add } = issueList();
  const d = doc.design!;
  const at = (...p: DocPath) => ['design', ...p];
  const roles = Object.keys(doc.roles);
  if (!Object.hasOwn(doc.roles, d.role)) add('UNKNOWN_ROLE', at('role'), `design role "${d.role}" is not defined (roles: ${roles.join(', ')})`);
  const checks = opts.checks ?? new CheckRegistry();
  const cat = d.catalogue;
  (cat.tools ?? []).forEach((t, i) => {
    if (!opts.tools.get(t)) add('UNKNOWN_TOOL', at('catalogue', 'tools', i), `catalogue tool "${t}" is not a known tool${opts.tools.list ? ` (known: ${opts.tools.list().map((x) => x.name).join(', ')})` : ''}`);
  });
  (cat.skills ?? []).forEach((s, i) => {
    if (!doc.skills || !Object.hasOwn(doc.skills, s)) add('UNKNOWN_SKILL', at('catalogue', 'skills', i), `catalogue skill "${s}" is not defined under \`skills\``);
  });
  (cat.roles ?? []).forEach((r, i) => {
    if (!Object.hasOwn(doc.roles, r)) add('UNKNOWN_ROLE', at('catalogue', 'roles', i), `catalogue role "${r}" is not defined (roles: ${roles.join(', ')})`);
    else if (r === d.role) add('UNKNOWN_ROLE', at('catalogue', 'roles', i), `the designer "${r}" cannot run the nodes it draws: list executor roles only`);
  });
  (cat.checks ?? []).forEach((c, i) => {
    if (!checks.has(c)) add('UNKNOWN_CHECK', at('catalogue', 'checks', i), `catalogue check "${c}" is unknown (known: ${checks.names().join(', ')})`);
  });
  if (doc.hops) add('SCHEMA', ['hops'], '`hops` cannot be used beside `design`: the designed nodes are not known before the run');
  for (const k of ['states', 'code'] as const) {
    if (doc[k] !== undefined) add('MIXED_NOTATION', [k], `fixed nodes beside \`design\` are written as \`steps\`, \`nodes\` or \`agents\`, not \`${k}\``);
  }

  const stage: DesignStage = {
    role: asRoleName(d.role),
    notation: d.notation ?? 'steps',
    catalogue: { tools: cat.tools ?? [], skills: cat.skills ?? [], roles: (cat.roles ?? []).map(asRoleName), checks: cat.checks ?? [], inputs: cat.inputs ?? [] },
    budget: { maxNodes: d.budget?.max_nodes ?? DESIGN_DEFAULTS.maxNodes, maxLoops: d.budget?.max_loops ?? DESIGN_DEFAULTS.maxLoops, maxIterations: d.budget?.max_iterations ?? DESIGN_DEFAULTS.maxIterations },
    onInvalid: d.on_invalid ?? 'fail',
    base: baseOf(doc),
  };
  const grammar = designGrammar(stage, doc, opts);
  const node = {
    id: d.id ?? DESIGN_DEFAULTS.id,
    role: d.role,
    prompt: d.prompt.replace(/\{\{\s*catalogue\s*\}\}/g, catalogueText(stage, doc, opts)),
    max_tokens: d.max_tokens ?? DESIGN_DEFAULTS.maxTokens,
    ...(d.temperature === undefined ? {} : { temperature: d.temperature }),
    ...(grammar ? { output: { schema: grammar as Record<string, unknown> } } : {}),
  };
  const { design: _design, ...rest } = doc;
  const key = rest.nodes ? 'nodes' : rest.agents ? 'agents' : 'steps';
  const out = { ...rest, [key]: [node, ...((rest[key] as unknown[] | undefined) ?? [])] } as WorkflowDoc;
  return { doc: out, stage, issues };
}

/** The entities a design is compiled with: the document without its design and node keys. */
function baseOf(doc: WorkflowDoc): Record<string, unknown> {
  const out: Record<string, unknown> = { name: doc.name, roles: doc.roles };
  if (doc.skills) out.skills = doc.skills;
  if (doc.models) out.models = doc.models;
  if (doc.limits) out.limits = doc.limits;
  return out;
}

/** The input ports a skill's prompt reads (`{{port}}`, not task or hints), in order. */
function skillPorts(prompt: string): string[] {
  return [...new Set(templateRefs(prompt).map((r) => r.root).filter((r) => r !== 'task' && r !== 'hints'))];
}

/**
 * The catalogue as the designer's prompt shows it: one line each for tools (with their ports),
 * skills (with their ports), roles and task inputs, e.g.
 * `Tools: weather(day), search(kind)\nSkills: weather_args(request)\nRoles: executor\nInputs: task.request`.
 */
export function catalogueText(stage: DesignStage, doc: WorkflowDoc, opts: CompileOptions): string {
  const c = stage.catalogue;
  const lines: string[] = [];
  if (c.tools.length) lines.push(`Tools: ${c.tools.map((t) => `${t}(${Object.keys(opts.tools.get(t)?.inputs ?? {}).join(', ')})`).join(', ')}`);
  if (c.skills.length) lines.push(`Skills: ${c.skills.map((s) => `${s}(${skillPorts(doc.skills?.[s]?.prompt ?? '').join(', ')})`).join(', ')}`);
  if (c.roles.length) lines.push(`Roles: ${c.roles.join(', ')}`);
  if (c.inputs.length) lines.push(`Inputs: ${c.inputs.map((f) => `task.${f}`).join(', ')}`);
  return lines.join('\n');
}

/**
 * The JSON schema the designer decodes under (also its node's contract), compiled from the
 * catalogue so that every design parses structurally: for `steps`, an object
 * `{ steps: [step, ...] }` of 1..max_nodes steps (`prefixItems`: step i has the id
 * `designIds(max_nodes)[i]`, so ids never repeat), each one of
 *  - a tool step `{ id, tool: <T>, inputs: { <port of T>: <source> ... } }` per catalogue tool;
 *  - a skill step `{ id, skill: <S>, role: <catalogue role>, inputs: { <port of S>: <source> } }`
 *    per catalogue skill;
 * sources from `task.<catalogue input>` and the ids, all as enums. What the grammar cannot promise (a source naming a step that is not there or the step
 * itself, a skill whose contract does not fit the tool it feeds) is left to the validator: those
 * are the designer's wiring faults. `graph` and `states` get a JSON object; `code` no grammar.
 */
export function designGrammar(stage: DesignStage, doc: WorkflowDoc, opts: CompileOptions): JsonSchema | undefined {
  if (stage.notation === 'code') return undefined;
  if (stage.notation !== 'steps') return { type: 'object' };
  const ids = designIds(stage.budget.maxNodes);
  const sources = [...stage.catalogue.inputs.map((f) => `task.${f}`), ...ids];
  const inputsOf = (ports: string[]) => ({
    type: 'object',
    properties: Object.fromEntries(ports.map((p) => [p, { enum: sources }])),
    required: ports,
    additionalProperties: false,
  });
  const roles: RoleName[] = stage.catalogue.roles;
  // The steps a design may hold at position i, each with the id `ids[i]`. The tool or skill comes
  // first: the designer's choice is then written right after the request it depends on.
  const stepsAt = (id: string): JsonSchema[] => {
    const variants: JsonSchema[] = [];
    for (const t of stage.catalogue.tools) {
      const shape = opts.tools.get(t);
      if (!shape) continue;
      const ports = Object.entries(shape.inputs).filter(([, def]) => !def.optional).map(([p]) => p);
      variants.push({ type: 'object', properties: { tool: { const: t }, id: { const: id }, inputs: inputsOf(ports) }, required: ['tool', 'id', 'inputs'], additionalProperties: false });
    }
    for (const s of stage.catalogue.skills) {
      const skill = doc.skills?.[s];
      if (!skill || !roles.length) continue;
      variants.push({ type: 'object', properties: { skill: { const: s }, id: { const: id }, role: { enum: roles }, inputs: inputsOf(skillPorts(skill.prompt)) }, required: ['skill', 'id', 'role', 'inputs'], additionalProperties: false });
    }
    return variants;
  };
  const positions = ids.map(stepsAt);
  if (!positions[0]!.length) return { type: 'object' };
  return {
    type: 'object',
    properties: { steps: { type: 'array', prefixItems: positions.map((v) => (v.length === 1 ? v[0]! : { oneOf: v })), minItems: 1, maxItems: stage.budget.maxNodes } },
    required: ['steps'],
    additionalProperties: false,
  };
}
