/**
 * A constrained edit language for MASS designs: an optimizer a small model can drive. Instead of
 * writing a whole design (free text, optimizer.ts), the optimizer names ONE edit of the current
 * design, picked from the family's menu (types.ts `EditMenu`):
 *
 * | op                | fields                  | what it does                                             |
 * | ----------------- | ----------------------- | -------------------------------------------------------- |
 * | `add_check`       | agent, check            | adds a menu check to the agent's contract                |
 * | `guard`           | agent, check            | adds the check AND retries (MAX_REDELEGATIONS) on every hop calling the agent (a hop re-delegating to another agent keeps it): catch and ask again, one edit (menus with `guard`) |
 * | `remove_check`    | agent, check            | removes one of its checks                                |
 * | `replace_check`   | agent, from, to         | swaps one of its checks for a menu check                 |
 * | `retry`           | hop, max                | on a broken contract, ask the hop's agent again (0–2x; 0 removes) |
 * | `move_hop`        | from, to                | moves hop `from` to position `to` (1-based)              |
 * | `insert_hop`      | at, agent, reads        | inserts a call of an agent at position `at`, reading one earlier-called agent or none (null) |
 * | `remove_hop`      | at                      | removes hop `at`                                         |
 * | `set_reads`       | hop, reads              | the hop reads one earlier-called agent, or none (null)   |
 * | `set_instruction` | agent, instruction      | gives the agent an instruction from the menu             |
 *
 * `editOptions` enumerates every edit of a design that yields a valid (parseMassDesign), changed
 * design not among the designs already tried; `editSchema` turns that list into a JSON schema
 * (`{edit: oneOf [...]}`, each branch an op with its fixed fields as `const` and its last field
 * as an `enum`), which node-llama-cpp compiles into the decoding grammar (GBNF), as the design
 * stage does (docs/designer.md). So every reply that completes under the grammar is one of the
 * enumerated edits: it parses, applies, and gives a valid new design — nothing is repaired.
 * Pure functions; no model.
 */
import { designJson, parseMassDesign, type DesignCatalogue, type DesignLimits, DESIGN_LIMITS } from './design.ts';
import { MAX_REDELEGATIONS } from './redelegate.ts';
import type { EditMenu, MassDesign, MassHop } from './types.ts';

/** One edit (see the module table). Hops are numbered from 1, as the rendered design numbers them. */
export type MassEdit =
  | { op: 'add_check'; agent: string; check: string }
  | { op: 'guard'; agent: string; check: string }
  | { op: 'remove_check'; agent: string; check: string }
  | { op: 'replace_check'; agent: string; from: string; to: string }
  | { op: 'retry'; hop: number; max: number }
  | { op: 'move_hop'; from: number; to: number }
  | { op: 'insert_hop'; at: number; agent: string; reads: string | null }
  | { op: 'remove_hop'; at: number }
  | { op: 'set_reads'; hop: number; reads: string | null }
  | { op: 'set_instruction'; agent: string; instruction: string };

export type EditOp = MassEdit['op'];

/** The fields of each op, in the order the grammar writes them (the last one varies inside a branch). */
export const EDIT_FIELDS: { [K in EditOp]: ReadonlyArray<Exclude<keyof Extract<MassEdit, { op: K }>, 'op'>> } = {
  add_check: ['agent', 'check'],
  guard: ['agent', 'check'],
  remove_check: ['agent', 'check'],
  replace_check: ['agent', 'from', 'to'],
  retry: ['hop', 'max'],
  move_hop: ['from', 'to'],
  insert_hop: ['at', 'agent', 'reads'],
  remove_hop: ['at'],
  set_reads: ['hop', 'reads'],
  set_instruction: ['agent', 'instruction'],
};

/** An edit as one line of text, e.g. `add_check picker tool_fits_request`, `retry hop 1 max 2`. */
export function editText(e: MassEdit): string {
  switch (e.op) {
    case 'add_check':
    case 'remove_check':
      return `${e.op} ${e.agent} ${e.check}`;
    case 'guard':
      return `guard ${e.agent} ${e.check} (retry ${MAX_REDELEGATIONS})`;
    case 'replace_check':
      return `replace_check ${e.agent} ${e.from} -> ${e.to}`;
    case 'retry':
      return `retry hop ${e.hop} max ${e.max}`;
    case 'move_hop':
      return `move_hop ${e.from} -> ${e.to}`;
    case 'insert_hop':
      return `insert_hop at ${e.at}: ${e.agent}${e.reads ? ` reads ${e.reads}` : ''}`;
    case 'remove_hop':
      return `remove_hop ${e.at}`;
    case 'set_reads':
      return `set_reads hop ${e.hop}: ${e.reads ?? 'none'}`;
    case 'set_instruction':
      return `set_instruction ${e.agent}: ${e.instruction}`;
    default:
      return e satisfies never;
  }
}

/** Problems of applying an edit: `EDIT_NOT_APPLICABLE` with what is wrong (a located message). */
export class EditError extends Error {
  readonly code = 'EDIT_NOT_APPLICABLE';
  constructor(message: string) {
    super(message);
    this.name = 'EditError';
  }
}

const clone = (d: MassDesign): MassDesign => JSON.parse(designJson(d)) as MassDesign;

/**
 * `design` with `edit` applied (a new object; the input is not changed). The result is NOT
 * validated here (parseMassDesign does that; `editOptions` keeps only valid results).
 * @throws EditError when the edit names an agent, check or hop the design does not have.
 */
export function applyEdit(design: MassDesign, edit: MassEdit): MassDesign {
  const d = clone(design);
  const agent = (id: string) => {
    const a = d.agents.find((x) => x.agent_id === id);
    if (!a) throw new EditError(`${editText(edit)}: no agent "${id}" (agents: ${d.agents.map((x) => x.agent_id).join(', ')})`);
    return a;
  };
  const hop = (n: number, at = 'hop') => {
    if (!Number.isInteger(n) || n < 1 || n > d.hops.length) throw new EditError(`${editText(edit)}: ${at} ${n} is not a hop of the design (1..${d.hops.length})`);
    return d.hops[n - 1]!;
  };
  switch (edit.op) {
    case 'add_check': {
      const a = agent(edit.agent);
      if (a.contract.checks.includes(edit.check)) throw new EditError(`${editText(edit)}: ${edit.agent} already has ${edit.check}`);
      a.contract.checks.push(edit.check);
      break;
    }
    case 'guard': {
      const a = agent(edit.agent);
      if (a.contract.checks.includes(edit.check)) throw new EditError(`${editText(edit)}: ${edit.agent} already has ${edit.check}`);
      a.contract.checks.push(edit.check);
      // A hop that already re-delegates to another agent keeps its hand-off; one retrying itself fewer times is raised.
      for (const h of d.hops) if (h.agent_id === edit.agent && (!h.redelegate || h.redelegate.to === h.agent_id) && (h.redelegate?.max ?? 0) < MAX_REDELEGATIONS) h.redelegate = { to: h.agent_id, max: MAX_REDELEGATIONS };
      break;
    }
    case 'remove_check': {
      const a = agent(edit.agent);
      if (!a.contract.checks.includes(edit.check)) throw new EditError(`${editText(edit)}: ${edit.agent} has no check ${edit.check}`);
      a.contract.checks = a.contract.checks.filter((c) => c !== edit.check);
      break;
    }
    case 'replace_check': {
      const a = agent(edit.agent);
      const i = a.contract.checks.indexOf(edit.from);
      if (i < 0) throw new EditError(`${editText(edit)}: ${edit.agent} has no check ${edit.from}`);
      if (a.contract.checks.includes(edit.to)) throw new EditError(`${editText(edit)}: ${edit.agent} already has ${edit.to}`);
      a.contract.checks[i] = edit.to;
      break;
    }
    case 'retry': {
      const h = hop(edit.hop);
      if (edit.max === 0) delete h.redelegate;
      else h.redelegate = { to: h.agent_id, max: edit.max };
      break;
    }
    case 'move_hop': {
      const h = hop(edit.from, 'from');
      hop(edit.to, 'to');
      d.hops.splice(edit.from - 1, 1);
      d.hops.splice(edit.to - 1, 0, h);
      break;
    }
    case 'insert_hop': {
      if (!Number.isInteger(edit.at) || edit.at < 1 || edit.at > d.hops.length + 1) throw new EditError(`${editText(edit)}: position ${edit.at} is outside 1..${d.hops.length + 1}`);
      agent(edit.agent);
      if (edit.reads !== null) agent(edit.reads);
      const h: MassHop = { agent_id: edit.agent, reads: edit.reads === null ? [] : [edit.reads] };
      d.hops.splice(edit.at - 1, 0, h);
      break;
    }
    case 'remove_hop':
      hop(edit.at, 'at');
      d.hops.splice(edit.at - 1, 1);
      break;
    case 'set_reads': {
      const h = hop(edit.hop);
      if (edit.reads !== null) agent(edit.reads);
      h.reads = edit.reads === null ? [] : [edit.reads];
      break;
    }
    case 'set_instruction':
      agent(edit.agent).instruction = edit.instruction;
      break;
    default:
      return edit satisfies never;
  }
  return d;
}

/** One edit of the current design and the valid design it gives. */
export interface EditOption {
  edit: MassEdit;
  design: MassDesign;
}

/** The candidate edits of `design` before validation (every op, every menu value). */
function candidates(design: MassDesign, menu: EditMenu): MassEdit[] {
  const out: MassEdit[] = [];
  const ids = design.agents.map((a) => a.agent_id);
  const n = design.hops.length;
  for (const a of design.agents) {
    for (const c of menu.checks) if (!a.contract.checks.includes(c)) out.push({ op: 'add_check', agent: a.agent_id, check: c });
    if (menu.guard) for (const c of menu.checks) if (!a.contract.checks.includes(c)) out.push({ op: 'guard', agent: a.agent_id, check: c });
    for (const c of a.contract.checks) out.push({ op: 'remove_check', agent: a.agent_id, check: c });
    for (const from of a.contract.checks) for (const to of menu.checks) if (!a.contract.checks.includes(to)) out.push({ op: 'replace_check', agent: a.agent_id, from, to });
    for (const text of [...(menu.instructions[a.agent_id] ?? []), ...(menu.instructions['*'] ?? [])]) if (text !== a.instruction) out.push({ op: 'set_instruction', agent: a.agent_id, instruction: text });
  }
  for (let h = 1; h <= n; h++) {
    const cur = design.hops[h - 1]!.redelegate?.max ?? 0;
    for (let max = 0; max <= MAX_REDELEGATIONS; max++) if (max !== cur) out.push({ op: 'retry', hop: h, max });
    for (let to = 1; to <= n; to++) if (to !== h) out.push({ op: 'move_hop', from: h, to });
    out.push({ op: 'remove_hop', at: h });
    for (const r of [null, ...ids]) out.push({ op: 'set_reads', hop: h, reads: r });
  }
  for (let at = 1; at <= n + 1; at++) for (const a of ids) for (const r of [null, ...ids]) out.push({ op: 'insert_hop', at, agent: a, reads: r });
  return out;
}

/**
 * Every edit of `design` (from `menu`) whose result passes the validator (`catalogue`, `limits`)
 * and differs from `design` and from every design in `tried` (canonical JSON), in a fixed order
 * (op, then agent or hop, then the menu's order). Pure.
 */
export function editOptions(design: MassDesign, menu: EditMenu, catalogue: DesignCatalogue, limits: DesignLimits = DESIGN_LIMITS, tried: readonly MassDesign[] = []): EditOption[] {
  const seen = new Set([designJson(design), ...tried.map(designJson)]);
  const out: EditOption[] = [];
  for (const edit of candidates(design, menu)) {
    let next: MassDesign;
    try {
      next = applyEdit(design, edit);
    } catch {
      continue;
    }
    const r = parseMassDesign(JSON.parse(designJson(next)), catalogue, limits);
    if (!r.ok) continue;
    const key = designJson(r.design);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ edit, design: r.design });
  }
  return out;
}

/**
 * The decoding grammar of one edit among `options`, as a JSON schema: `{edit: {oneOf: [...]}}`,
 * one branch per (op, every field but the last), its fixed fields `const`, its last field an
 * `enum` of the values the options hold. The branches are disjoint, so a decoded edit matches one.
 * Errors: none (an empty `options` gives a schema no value satisfies: `{edit: {enum: []}}`).
 */
export function editSchema(options: readonly EditOption[]): Record<string, unknown> {
  const branches = new Map<string, { op: EditOp; fixed: Array<[string, unknown]>; last: string; values: unknown[] }>();
  for (const { edit } of options) {
    const fields = EDIT_FIELDS[edit.op] as readonly string[];
    const rec = edit as unknown as Record<string, unknown>;
    const fixed = fields.slice(0, -1).map((f) => [f, rec[f]] as [string, unknown]);
    const last = fields.at(-1)!;
    const key = JSON.stringify([edit.op, fixed]);
    const b = branches.get(key) ?? { op: edit.op, fixed, last, values: [] };
    b.values.push(rec[last]);
    branches.set(key, b);
  }
  const oneOf = [...branches.values()].map((b) => ({
    type: 'object',
    properties: { op: { const: b.op }, ...Object.fromEntries(b.fixed.map(([f, v]) => [f, { const: v }])), [b.last]: { enum: b.values } },
    required: ['op', ...b.fixed.map(([f]) => f), b.last],
    additionalProperties: false,
  }));
  return { type: 'object', properties: { edit: oneOf.length ? { oneOf } : { enum: [] } }, required: ['edit'], additionalProperties: false };
}

/** The longest edit of `options` as the grammar writes it (compact JSON `{"edit":{...}}`), characters: what a reply can cost. */
export function longestEditChars(options: readonly EditOption[]): number {
  return options.reduce((m, o) => Math.max(m, JSON.stringify({ edit: orderedEdit(o.edit) }).length), 0);
}

/** The edit with its keys in the grammar's order (op, then EDIT_FIELDS). */
export function orderedEdit(e: MassEdit): Record<string, unknown> {
  const rec = e as unknown as Record<string, unknown>;
  return { op: e.op, ...Object.fromEntries((EDIT_FIELDS[e.op] as readonly string[]).map((f) => [f, rec[f]])) };
}

/**
 * Reads a decoded reply `{edit: {...}}` back to one of `options` (by op and fields), or undefined
 * when it matches none (a reply cut off or changed outside the grammar).
 */
export function readEdit(reply: unknown, options: readonly EditOption[]): EditOption | undefined {
  const e = reply && typeof reply === 'object' ? (reply as { edit?: unknown }).edit : undefined;
  if (!e || typeof e !== 'object') return undefined;
  const key = JSON.stringify(e, Object.keys(e as object).sort());
  return options.find((o) => JSON.stringify(orderedEdit(o.edit), Object.keys(orderedEdit(o.edit)).sort()) === key);
}
