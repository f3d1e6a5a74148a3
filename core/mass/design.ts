/**
 * MASS text workflows (Sakana AI, "Multi-Agent Self-Supervision"; public code
 * `harness_improvement/iterate_multi_agent_prompt.py`): a workflow is text appended to an
 * orchestrator's task prompt. It names the sub-agents (`roles`: each one's responsibility), what
 * each does (`instructions`), what each must hand back (`contracts`: fields, artefacts and named
 * checks) and in which order the orchestrator calls them (`hops`, with recall of an agent called
 * before and the replies each hop reads).
 *
 * Two written forms are accepted (JSON):
 *  - version 0, MASS's starting design: a list of `{agent_id, role, instruction}`. An entry whose
 *    `agent_id` contains `orchestrator` is the orchestrator's own role and instruction; the others
 *    are sub-agents, called once each in list order, each handing back one field `reply`;
 *  - version 1: `{orchestrator?, agents: [{agent_id, role, instruction, contract?, model?}],
 *    hops?: [agent_id | {agent_id, reads?, scope?, redelegate?: {to?, max?}}]}`; without `hops`
 *    every agent is called once in list order. `redelegate`: when the hop's reply breaks its
 *    contract, the orchestrator hands the task to `to` (default: the same agent) again, at most
 *    `max` times (default 1, at most MAX_REDELEGATIONS; redelegate.ts).
 * `parseMassDesign` returns the normalized design or located issues (never throws);
 * `renderMassDesign` gives the text appended to the task prompt; `diffMassDesigns` the change.
 */
import type { MassAgent, MassContract, MassDesign, MassDesignIssue, MassHop } from './types.ts';
import { MAX_REDELEGATIONS } from './redelegate.ts';

/** Size limits a design must keep (a small model's context is short: stories260K has 512 tokens). */
export interface DesignLimits {
  maxAgents: number;
  maxHops: number;
  /** Most fields plus artefacts in one contract. */
  maxContractFields: number;
  /** Longest role text, characters. */
  maxRole: number;
  /** Longest instruction or hop scope, characters. */
  maxInstruction: number;
}

export const DESIGN_LIMITS: DesignLimits = { maxAgents: 4, maxHops: 6, maxContractFields: 3, maxRole: 60, maxInstruction: 160 };

/** What a design may name: the checks it may attach and the model refs an agent may ask for. */
export interface DesignCatalogue {
  checks: readonly string[];
  /** Model references an agent's `model` may name; empty: agents take the default model. */
  models?: readonly string[];
}

const ID = /^[A-Za-z_][A-Za-z0-9_-]{0,31}$/;
const FIELD = /^[a-z_][a-z0-9_]{0,23}$/;
/** Agent ids the compiled workflow uses for its own roles (the bare task's helper, the judge, the optimizer as author). */
const RESERVED_IDS = new Set(['helper', 'judge', 'optimizer']);
/** Field names the compiled reply schema reserves. */
const RESERVED_FIELDS = new Set(['answer']);

export type ParseResult = { ok: true; design: MassDesign; issues: [] } | { ok: false; issues: MassDesignIssue[] };

/**
 * Reads a design from its JSON text or parsed value (either form above), validates it against
 * `catalogue` and `limits`, and returns it normalized (version 1, defaults filled) or every issue
 * found, each with a code and the path of the field at fault (e.g. `agents[1].contract.checks[0]`).
 * Codes: NOT_JSON, BAD_SHAPE, MISSING_FIELD, BAD_ID, RESERVED_ID, DUPLICATE_AGENT, UNKNOWN_AGENT, UNKNOWN_CHECK,
 * UNKNOWN_MODEL, BAD_FIELD_NAME, DUPLICATE_FIELD, READS_LATER, NO_AGENTS, OVER_LIMIT, EMPTY_TEXT. Pure.
 * (A hop's re-delegations count as hops against `maxHops`.)
 */
export function parseMassDesign(input: unknown, catalogue: DesignCatalogue, limits: DesignLimits = DESIGN_LIMITS): ParseResult {
  const issues: MassDesignIssue[] = [];
  const issue = (code: string, path: string, message: string) => void issues.push({ code, path, message });
  let doc = input;
  if (typeof doc === 'string') {
    const text = doc.trim();
    const start = text.search(/[[{]/);
    if (start < 0) return { ok: false, issues: [{ code: 'NOT_JSON', path: '', message: 'the design holds no JSON list or object' }] };
    try {
      doc = JSON.parse(text.slice(start));
    } catch (e) {
      return { ok: false, issues: [{ code: 'NOT_JSON', path: '', message: `the design is not valid JSON: ${(e as Error).message}` }] };
    }
  }
  let orchestrator: MassDesign['orchestrator'];
  let rawAgents: unknown[];
  let rawHops: unknown[] | undefined;
  let version: 0 | 1;
  let base = '';
  if (Array.isArray(doc)) {
    version = 0;
    rawAgents = doc;
  } else if (doc && typeof doc === 'object') {
    version = 1;
    const o = doc as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!['orchestrator', 'agents', 'hops'].includes(k)) issue('BAD_SHAPE', k, `unknown key "${k}"; a design has orchestrator, agents and hops`);
    if (!Array.isArray(o.agents)) return { ok: false, issues: [...issues, { code: o.agents === undefined ? 'MISSING_FIELD' : 'BAD_SHAPE', path: 'agents', message: 'agents must be a list of {agent_id, role, instruction}' }] };
    rawAgents = o.agents;
    base = 'agents';
    if (o.hops !== undefined) {
      if (!Array.isArray(o.hops)) issue('BAD_SHAPE', 'hops', 'hops must be a list of agent ids or {agent_id, reads, scope}');
      else rawHops = o.hops;
    }
    if (o.orchestrator !== undefined) {
      const r = readText(o.orchestrator, 'orchestrator', issue, limits);
      if (r) orchestrator = r;
    }
  } else {
    return { ok: false, issues: [{ code: 'BAD_SHAPE', path: '', message: 'a design is a list of agents (version 0) or an object with agents and hops' }] };
  }
  const at = (i: number) => (base ? `${base}[${i}]` : `[${i}]`);
  const agents: MassAgent[] = [];
  rawAgents.forEach((raw, i) => {
    const path = at(i);
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return issue('BAD_SHAPE', path, 'an agent is an object {agent_id, role, instruction}');
    const a = raw as Record<string, unknown>;
    const allowed = version === 0 ? ['agent_id', 'role', 'instruction'] : ['agent_id', 'role', 'instruction', 'contract', 'model'];
    for (const k of Object.keys(a)) if (!allowed.includes(k)) issue('BAD_SHAPE', `${path}.${k}`, `unknown key "${k}"; an agent has ${allowed.join(', ')}`);
    const id = a.agent_id;
    if (typeof id !== 'string') return issue('MISSING_FIELD', `${path}.agent_id`, 'agent_id must be text');
    if (!ID.test(id)) return issue('BAD_ID', `${path}.agent_id`, `agent_id "${id}" must start with a letter or _ and use letters, digits, _ or - (at most 32)`);
    if (RESERVED_IDS.has(id)) return issue('RESERVED_ID', `${path}.agent_id`, `agent_id "${id}" is reserved (${[...RESERVED_IDS].join(', ')})`);
    const text = readText(a, path, issue, limits);
    if (!text) return;
    if (/orchestrator/i.test(id)) {
      if (orchestrator) return issue('DUPLICATE_AGENT', `${path}.agent_id`, 'the orchestrator is given twice');
      orchestrator = text;
      return;
    }
    if (agents.some((x) => x.agent_id === id)) return issue('DUPLICATE_AGENT', `${path}.agent_id`, `agent_id "${id}" is used twice`);
    const contract = readContract(a.contract, `${path}.contract`, catalogue, limits, issue);
    const agent: MassAgent = { agent_id: id, role: text.role, instruction: text.instruction, contract: contract ?? { fields: ['reply'], artefacts: [], checks: [] } };
    if (a.model !== undefined) {
      if (typeof a.model !== 'string' || !(catalogue.models ?? []).includes(a.model)) issue('UNKNOWN_MODEL', `${path}.model`, `model ${JSON.stringify(a.model)} is not one of: ${(catalogue.models ?? []).join(', ') || '(none: agents use the default model)'}`);
      else agent.model = a.model;
    }
    agents.push(agent);
  });
  if (agents.length === 0 && !issues.length) issue('NO_AGENTS', base, 'the design has no sub-agent (only an orchestrator, or nothing)');
  if (agents.length > limits.maxAgents) issue('OVER_LIMIT', base, `the design has ${agents.length} sub-agents; at most ${limits.maxAgents}`);

  const ids = new Set(agents.map((a) => a.agent_id));
  const hops: MassHop[] = [];
  if (rawHops) {
    rawHops.forEach((raw, j) => {
      const path = `hops[${j}]`;
      const h = typeof raw === 'string' ? { agent_id: raw } : raw;
      if (!h || typeof h !== 'object' || Array.isArray(h)) return issue('BAD_SHAPE', path, 'a hop is an agent id or {agent_id, reads, scope}');
      const o = h as Record<string, unknown>;
      for (const k of Object.keys(o)) if (!['agent_id', 'reads', 'scope', 'redelegate'].includes(k)) issue('BAD_SHAPE', `${path}.${k}`, `unknown key "${k}"; a hop has agent_id, reads, scope, redelegate`);
      if (typeof o.agent_id !== 'string' || !ids.has(o.agent_id)) return issue('UNKNOWN_AGENT', `${path}.agent_id`, `hop calls ${JSON.stringify(o.agent_id)}, which is no agent of the design (${[...ids].join(', ')})`);
      const called = new Set(hops.map((x) => x.agent_id));
      const reads: string[] = [];
      if (o.reads !== undefined) {
        if (!Array.isArray(o.reads)) issue('BAD_SHAPE', `${path}.reads`, 'reads must be a list of agent ids');
        else
          o.reads.forEach((r, k) => {
            if (typeof r !== 'string' || !ids.has(r)) issue('UNKNOWN_AGENT', `${path}.reads[${k}]`, `reads ${JSON.stringify(r)}, which is no agent of the design`);
            else if (!called.has(r)) issue('READS_LATER', `${path}.reads[${k}]`, `reads ${r}, which no earlier hop has called`);
            else if (!reads.includes(r)) reads.push(r);
          });
      }
      const hop: MassHop = { agent_id: o.agent_id, reads };
      if (o.scope !== undefined) {
        if (typeof o.scope !== 'string' || !o.scope.trim()) issue('EMPTY_TEXT', `${path}.scope`, 'scope must be non-empty text');
        else if (o.scope.length > limits.maxInstruction) issue('OVER_LIMIT', `${path}.scope`, `scope has ${o.scope.length} characters; at most ${limits.maxInstruction}`);
        else hop.scope = o.scope.trim();
      }
      if (o.redelegate !== undefined) {
        const r = readRedelegate(o.redelegate, `${path}.redelegate`, o.agent_id, ids, issue);
        if (r) hop.redelegate = r;
      }
      hops.push(hop);
    });
    if (rawHops.length === 0) issue('BAD_SHAPE', 'hops', 'hops is empty: the orchestrator would call nobody');
  } else {
    // No hops: every agent once, in list order, each reading the reply before it.
    agents.forEach((a, i) => hops.push({ agent_id: a.agent_id, reads: i > 0 ? [agents[i - 1]!.agent_id] : [] }));
  }
  const redelegations = hops.reduce((n, h) => n + (h.redelegate?.max ?? 0), 0);
  if (hops.length + redelegations > limits.maxHops) issue('OVER_LIMIT', 'hops', `the design has ${hops.length} hops${redelegations ? ` and ${redelegations} re-delegation(s)` : ''}; at most ${limits.maxHops} in all`);
  if (issues.length) return { ok: false, issues };
  const design: MassDesign = { agents, hops };
  if (orchestrator) design.orchestrator = orchestrator;
  return { ok: true, design, issues: [] };
}

/** A hop's `redelegate`: `{to?, max?}` (to: an agent of the design, default the hop's; max 1..MAX_REDELEGATIONS, default 1). */
function readRedelegate(raw: unknown, path: string, self: string, ids: ReadonlySet<string>, issue: (c: string, p: string, m: string) => void): MassHop['redelegate'] | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    issue('BAD_SHAPE', path, 'redelegate is {to, max}: who gets the task when the reply breaks its contract, and how many times at most');
    return undefined;
  }
  const o = raw as Record<string, unknown>;
  let ok = true;
  for (const k of Object.keys(o)) if (!['to', 'max'].includes(k)) { issue('BAD_SHAPE', `${path}.${k}`, `unknown key "${k}"; redelegate has to, max`); ok = false; }
  const to = o.to ?? self;
  if (typeof to !== 'string' || !ids.has(to)) { issue('UNKNOWN_AGENT', `${path}.to`, `re-delegates to ${JSON.stringify(to)}, which is no agent of the design (${[...ids].join(', ')})`); ok = false; }
  const max = o.max ?? 1;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > MAX_REDELEGATIONS) { issue('OVER_LIMIT', `${path}.max`, `max must be a whole number from 1 to ${MAX_REDELEGATIONS}, got ${JSON.stringify(max)}`); ok = false; }
  return ok ? { to: to as string, max: max as number } : undefined;
}

function readText(raw: unknown, path: string, issue: (c: string, p: string, m: string) => void, limits: DesignLimits): { role: string; instruction: string } | undefined {
  if (!raw || typeof raw !== 'object') {
    issue('BAD_SHAPE', path, 'expected an object with role and instruction');
    return undefined;
  }
  const o = raw as Record<string, unknown>;
  let ok = true;
  for (const [k, max] of [['role', limits.maxRole], ['instruction', limits.maxInstruction]] as const) {
    const v = o[k];
    if (typeof v !== 'string') { issue('MISSING_FIELD', `${path}.${k}`, `${k} must be text`); ok = false; }
    else if (!v.trim()) { issue('EMPTY_TEXT', `${path}.${k}`, `${k} is empty`); ok = false; }
    else if (v.length > max) { issue('OVER_LIMIT', `${path}.${k}`, `${k} has ${v.length} characters; at most ${max}`); ok = false; }
  }
  return ok ? { role: (o.role as string).trim(), instruction: (o.instruction as string).trim() } : undefined;
}

function readContract(raw: unknown, path: string, catalogue: DesignCatalogue, limits: DesignLimits, issue: (c: string, p: string, m: string) => void): MassContract | undefined {
  if (raw === undefined) return undefined;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    issue('BAD_SHAPE', path, 'a contract is {fields, artefacts, checks}');
    return undefined;
  }
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!['fields', 'artefacts', 'checks'].includes(k)) issue('BAD_SHAPE', `${path}.${k}`, `unknown key "${k}"; a contract has fields, artefacts, checks`);
  const list = (k: 'fields' | 'artefacts' | 'checks'): string[] => {
    const v = o[k];
    if (v === undefined) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      issue('BAD_SHAPE', `${path}.${k}`, `${k} must be a list of names`);
      return [];
    }
    return v as string[];
  };
  const fields = list('fields');
  const artefacts = list('artefacts');
  const checks = list('checks');
  const seen = new Set<string>();
  [...fields.map((f, i) => [f, `fields[${i}]`] as const), ...artefacts.map((f, i) => [f, `artefacts[${i}]`] as const)].forEach(([f, p]) => {
    if (!FIELD.test(f) || RESERVED_FIELDS.has(f)) issue('BAD_FIELD_NAME', `${path}.${p}`, `field name "${f}" must be lower-case letters, digits and _ (at most 24)${RESERVED_FIELDS.has(f) ? ', and not a reserved name' : ''}`);
    else if (seen.has(f)) issue('DUPLICATE_FIELD', `${path}.${p}`, `"${f}" is named twice in the contract`);
    seen.add(f);
  });
  if (fields.length + artefacts.length === 0) issue('MISSING_FIELD', `${path}.fields`, 'a contract must ask for at least one field or artefact');
  if (fields.length + artefacts.length > limits.maxContractFields) issue('OVER_LIMIT', path, `the contract asks for ${fields.length + artefacts.length} fields and artefacts; at most ${limits.maxContractFields}`);
  checks.forEach((c, i) => {
    if (!catalogue.checks.includes(c)) issue('UNKNOWN_CHECK', `${path}.checks[${i}]`, `unknown check "${c}"; known checks: ${catalogue.checks.join(', ')}`);
  });
  return { fields, artefacts, checks: [...new Set(checks)] };
}

/** The marker MASS's public code opens a design block with. */
export const DESIGN_MARKER = 'Create an agent team with following agent candidates to solve this problem:';

/**
 * The text appended to the orchestrator's task prompt for `design` (compact: one line per agent,
 * one per hop). Deterministic; the same design renders the same text.
 */
export function renderMassDesign(design: MassDesign): string {
  const lines = [DESIGN_MARKER];
  if (design.orchestrator) lines.push(`You (orchestrator): ${design.orchestrator.role}. ${design.orchestrator.instruction}`);
  for (const a of design.agents) {
    const c = a.contract;
    const gives = [...c.fields, ...c.artefacts.map((x) => `${x} (artefact)`)].join(', ');
    lines.push(`- ${a.agent_id}: ${a.role}. ${a.instruction} Returns: ${gives}.${c.checks.length ? ` Checks: ${c.checks.join(', ')}.` : ''}`);
  }
  lines.push('Hops:');
  design.hops.forEach((h, j) => {
    const recall = design.hops.slice(0, j).some((x) => x.agent_id === h.agent_id);
    lines.push(`${j + 1}. ${recall ? 'recall ' : ''}${h.agent_id}${h.reads.length ? ` reads ${h.reads.join(', ')}` : ''}${h.scope ? `: ${h.scope}` : ''}${redelegateText(h)}`);
  });
  return lines.join('\n');
}

function redelegateText(h: MassHop): string {
  return h.redelegate ? ` (contract broken: re-delegate to ${h.redelegate.to}, at most ${h.redelegate.max}x)` : '';
}

/** The normalized design as canonical JSON (version 1 form): what is stored, hashed and shown to the optimizer. */
export function designJson(design: MassDesign): string {
  const o: Record<string, unknown> = {};
  if (design.orchestrator) o.orchestrator = { role: design.orchestrator.role, instruction: design.orchestrator.instruction };
  o.agents = design.agents.map((a) => ({ agent_id: a.agent_id, role: a.role, instruction: a.instruction, contract: { fields: a.contract.fields, artefacts: a.contract.artefacts, checks: a.contract.checks }, ...(a.model ? { model: a.model } : {}) }));
  o.hops = design.hops.map((h) => ({ agent_id: h.agent_id, reads: h.reads, ...(h.scope ? { scope: h.scope } : {}), ...(h.redelegate ? { redelegate: { to: h.redelegate.to, max: h.redelegate.max } } : {}) }));
  return JSON.stringify(o);
}

/** One change of an agent between two designs. */
export interface AgentChange {
  agent_id: string;
  field: 'role' | 'instruction' | 'contract.fields' | 'contract.artefacts' | 'contract.checks' | 'model';
  from: string;
  to: string;
}

/** What changed from design `a` to design `b` (`null`: the bare task, no design). */
export interface DesignDiff {
  identical: boolean;
  orchestrator?: { from: string; to: string };
  agents: { added: string[]; removed: string[]; changed: AgentChange[] };
  /** The hop lists as rendered lines, when they differ. */
  hops?: { from: string[]; to: string[] };
  /** Line diff of the rendered texts (LCS): ' ' kept, '-' only in a, '+' only in b. */
  lines: Array<{ op: ' ' | '-' | '+'; text: string }>;
}

/**
 * The change from `a` to `b`: agents added, removed and changed field by field, the hop lists,
 * and a line diff of the rendered texts (longest common subsequence, as MASS's design diffs in
 * the optimizer's history are line diffs of the design blocks). Pure.
 */
export function diffMassDesigns(a: MassDesign | null, b: MassDesign | null): DesignDiff {
  const la = a ? renderMassDesign(a).split('\n') : [];
  const lb = b ? renderMassDesign(b).split('\n') : [];
  const lines = lineDiff(la, lb);
  const byId = (d: MassDesign | null) => new Map((d?.agents ?? []).map((x) => [x.agent_id, x]));
  const A = byId(a);
  const B = byId(b);
  const changed: AgentChange[] = [];
  for (const [id, x] of A) {
    const y = B.get(id);
    if (!y) continue;
    const pairs: Array<[AgentChange['field'], string, string]> = [
      ['role', x.role, y.role],
      ['instruction', x.instruction, y.instruction],
      ['contract.fields', x.contract.fields.join(', '), y.contract.fields.join(', ')],
      ['contract.artefacts', x.contract.artefacts.join(', '), y.contract.artefacts.join(', ')],
      ['contract.checks', x.contract.checks.join(', '), y.contract.checks.join(', ')],
      ['model', x.model ?? '', y.model ?? ''],
    ];
    for (const [field, from, to] of pairs) if (from !== to) changed.push({ agent_id: id, field, from, to });
  }
  const hopLines = (d: MassDesign | null) => (d?.hops ?? []).map((h) => `${h.agent_id}${h.reads.length ? ` reads ${h.reads.join(', ')}` : ''}${h.scope ? `: ${h.scope}` : ''}${redelegateText(h)}`);
  const ha = hopLines(a);
  const hb = hopLines(b);
  const diff: DesignDiff = {
    identical: la.join('\n') === lb.join('\n'),
    agents: { added: [...B.keys()].filter((k) => !A.has(k)), removed: [...A.keys()].filter((k) => !B.has(k)), changed },
    lines,
  };
  const oa = a?.orchestrator ? `${a.orchestrator.role}. ${a.orchestrator.instruction}` : '';
  const ob = b?.orchestrator ? `${b.orchestrator.role}. ${b.orchestrator.instruction}` : '';
  if (oa !== ob) diff.orchestrator = { from: oa, to: ob };
  if (ha.join('\n') !== hb.join('\n')) diff.hops = { from: ha, to: hb };
  return diff;
}

/** A line diff by longest common subsequence (O(n·m); designs are a few lines). */
export function lineDiff(a: readonly string[], b: readonly string[]): DesignDiff['lines'] {
  const n = a.length;
  const m = b.length;
  const L: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i]![j] = a[i] === b[j] ? L[i + 1]![j + 1]! + 1 : Math.max(L[i + 1]![j]!, L[i]![j + 1]!);
  const out: DesignDiff['lines'] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push({ op: ' ', text: a[i]! }); i++; j++; }
    else if (L[i + 1]![j]! >= L[i]![j + 1]!) out.push({ op: '-', text: a[i++]! });
    else out.push({ op: '+', text: b[j++]! });
  }
  while (i < n) out.push({ op: '-', text: a[i++]! });
  while (j < m) out.push({ op: '+', text: b[j++]! });
  return out;
}

/** The line diff as unified-diff-like text ('-'/'+'/' ' prefixes), as the optimizer reads it. */
export function diffText(diff: DesignDiff): string {
  return diff.identical ? '(designs are identical)' : diff.lines.filter((l) => l.op !== ' ').map((l) => `${l.op}${l.text}`).join('\n');
}
