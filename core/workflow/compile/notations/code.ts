/**
 * The code-block notation (FloWright's code blocks): a restricted JavaScript text under `code`,
 * parsed with acorn and NEVER evaluated. The whole subset (docs/workflow-spec.md):
 *
 *   const <id> = agent('<role>', { <inputs> }, { <options> }?);          // an agent node
 *   const <id> = tool('<tool>', { <inputs> }, { <options> }?);           // a tool node
 *   const <id> = skill('<skill>', '<role>', { <inputs> }, { <options> }?); // a skill node
 *   loop({ from: <id>, to: <id>, port: '<port>'?, while: '<condition>'?, max_iterations: <n> });
 *   return <id>;  |  return <id>.<field>;                                // the answer (optional, last)
 *
 * An input is `<id>` (a node defined above), `<id>.<field>`, `task.<field>`, the shorthand
 * `{ plan }`, or `{ from: <ref>, type: '<port type>', optional: true }`. Options are literal
 * values (strings, numbers, booleans, null, arrays, objects; template literals without `${}`)
 * with a graph node's fields: prompt, output, max_tokens, temperature, stop, timeout_ms,
 * wired_by (and role for a tool). `loop` is a loop back edge: after `from` runs, while its output
 * satisfies `while` (the condition language, core/workflow/condition.ts), go back to `to` at most
 * `max_iterations` times, handing `from`'s output to `to`'s port `port` (default: `from`).
 * Everything else is rejected with a located issue: path `['code', <id>, ...]` (or
 * `['code', 'loop', k, ...]`, `['code', 'return']`, `['code']`) and the 1-based line:column inside
 * the code at the head of the message and in `inCode`.
 */
import { parse, type CallExpression, type Expression, type ExpressionStatement, type ModuleDeclaration, type Node, type ObjectExpression, type Program, type SpreadElement, type Statement, type VariableDeclaration } from 'acorn';
import { formatPath, type SpecIssue, type SpecIssueCode } from '../../errors.ts';
import type { DocPath } from '../../graph.ts';
import { NodeSpec, PortTypeSpec } from '../../spec.ts';
import type { CodePosition, DeclaredEdge, NotationSource, RawNode } from '../types.ts';
import { codeValues, describeExpression } from './codeValues.ts';

/** The three node calls: their argument names in order, and how many are required. */
const CALLS = {
  agent: { args: ['role', 'inputs', 'options'], required: 2 },
  tool: { args: ['tool', 'inputs', 'options'], required: 2 },
  skill: { args: ['skill', 'role', 'inputs', 'options'], required: 3 },
} as const;
type CallName = keyof typeof CALLS;
const isCall = (name: string): name is CallName => Object.hasOwn(CALLS, name);
const FORM: Record<CallName, string> = {
  agent: "agent('<role>', { inputs }, { options }?)",
  tool: "tool('<tool>', { inputs }, { options }?)",
  skill: "skill('<skill>', '<role>', { inputs }, { options }?)",
};
const RESERVED = ['task', 'agent', 'tool', 'skill', 'loop', 'eval'];
/** Node fields a call writes as arguments, or never: not options. */
const NOT_OPTIONS = ['id', 'name', 'kind', 'tool', 'skill', 'inputs', 'depends_on'];
const LOOP_FIELDS = ['from', 'to', 'port', 'while', 'max_iterations'];
const SUBSET = 'statements: const <id> = agent(...) | tool(...) | skill(...), loop({...}), return <id>';

/**
 * Reads a code block into node entries (`['code', <id>]`, in the order of the calls), loop edges
 * (`['code', 'loop', k]`) and the answer (`return`), with the position of every path it made.
 *
 * Issues: CODE_SYNTAX (acorn cannot parse the text; `fatal`), DUPLICATE_ID (a name declared
 * twice, as acorn reports it; `fatal`), CODE_UNSUPPORTED (anything outside the subset), SCHEMA
 * (a bad option or loop field), UNKNOWN_NODE (a name used before its definition),
 * UNBOUNDED_CYCLE (a `while` loop, or loop() without max_iterations), BAD_ANSWER (a `return`
 * that names no node), NO_NODES (no call at all). Unknown names in inputs are left to the parse
 * stage (UNKNOWN_NODE), unknown loop ends to the build stage (DANGLING_EDGE). Pure: never runs
 * the code.
 */
export function readCode(code: string): NotationSource {
  const issues: SpecIssue[] = [];
  const positions = new Map<string, CodePosition>([['code', { line: 1, column: 1 }]]);
  const entries: NotationSource['entries'] = [];
  const edges: DeclaredEdge[] = [];
  let answer: string | undefined;

  const pos = (n: Node): CodePosition => ({ line: n.loc!.start.line, column: n.loc!.start.column + 1 });
  const place = (path: DocPath, n: Node) => void positions.set(formatPath(path), pos(n));
  const issue = (c: SpecIssueCode, path: DocPath, at: Node | CodePosition, message: string): undefined => {
    const p = 'line' in at ? at : pos(at);
    issues.push({ code: c, path, message: `code ${p.line}:${p.column}: ${message}`, inCode: p });
    return undefined;
  };
  const unsupported = (path: DocPath, at: Node, message: string) => issue('CODE_UNSUPPORTED', path, at, message);

  let program: Program;
  try {
    program = parse(code, { ecmaVersion: 'latest', sourceType: 'module', allowReturnOutsideFunction: true, locations: true });
  } catch (e) {
    const loc = (e as { loc?: { line: number; column: number } }).loc ?? { line: 1, column: 0 };
    const message = (e as Error).message.replace(/\s*\(\d+:\d+\)$/, '');
    const dup = /^Identifier '(.+)' has already been declared$/.exec(message);
    const at = { line: loc.line, column: loc.column + 1 };
    if (dup) issue('DUPLICATE_ID', ['code', dup[1]!], at, `duplicate node id "${dup[1]}": \`${dup[1]}\` is declared twice`);
    else issue('CODE_SYNTAX', ['code'], at, message);
    return { entries, edges, issues, positions, fatal: true };
  }

  // Every name a `const` declares, so a use before its definition is told apart from a typo.
  const declared = new Map<string, Node>();
  for (const st of program.body) {
    if (st.type === 'VariableDeclaration') for (const d of st.declarations) if (d.id.type === 'Identifier') declared.set(d.id.name, d.id);
  }
  const defined = new Set<string>();
  /** Names whose declaration was rejected: references to them are dropped without a second issue. */
  const broken = new Set<string>();
  const values = codeValues({ issue, unsupported, place });

  /** `<id>`, `<id>.<field>...` or `task.<field>` as the dotted text; undefined (issue reported) otherwise. */
  const ref = (e: Expression | SpreadElement, path: DocPath): string | undefined => {
    if (e.type === 'Identifier') {
      if (broken.has(e.name)) return undefined;
      if (e.name !== 'task' && !defined.has(e.name) && declared.has(e.name)) {
        const d = pos(declared.get(e.name)!);
        return issue('UNKNOWN_NODE', path, e, `\`${e.name}\` is used before it is defined (at ${d.line}:${d.column}): values flow forward, and back only through loop(...)`);
      }
      return e.name;
    }
    if (e.type === 'MemberExpression') {
      if (e.computed) return unsupported(path, e.property, 'computed member access (`a[...]`) is not allowed: write `a.field`');
      if (e.optional) return unsupported(path, e, 'optional chaining (`?.`) is not allowed');
      if (e.property.type !== 'Identifier') return unsupported(path, e.property, 'a field is a plain name');
      if (e.object.type === 'Super') return unsupported(path, e.object, '`super` is not allowed');
      const head = ref(e.object, path);
      return head === undefined ? undefined : `${head}.${e.property.name}`;
    }
    if (e.type === 'CallExpression') return unsupported(path, e, 'a call inside an input: assign it to a name first (`const <id> = ...`), then use the name');
    if (e.type === 'ChainExpression') return unsupported(path, e, 'optional chaining (`?.`) is not allowed');
    return unsupported(path, e, `${describeExpression(e)} is not an input: write \`<id>\`, \`<id>.<field>\`, \`task.<field>\` or { from, type, optional }`);
  };

  const readInputs = (obj: Expression | SpreadElement, path: DocPath): RawNode['inputs'] | undefined => {
    if (obj.type !== 'ObjectExpression') return unsupported(path, obj, `the inputs are an object literal ({ port: <id> | <id>.<field> | task.<field> }), got ${describeExpression(obj)}`);
    place(path, obj);
    const out: NonNullable<RawNode['inputs']> = {};
    let ok = true;
    const read = values.eachProperty(obj, path, (key, value) => {
      const p = [...path, key];
      if (value.type !== 'ObjectExpression') {
        const from = ref(value, p);
        if (from === undefined) ok = false;
        else out[key] = from;
        return;
      }
      const spec = values.literalFields(value, p, { from: (v) => ref(v, [...p, 'from']) });
      if (!spec) return void (ok = false);
      const bad = Object.keys(spec).filter((k) => !['from', 'type', 'optional'].includes(k));
      const problem = bad.length ? `unknown field(s) of an input: ${bad.join(', ')} (fields: from, type, optional)`
        : !Object.hasOwn(spec, 'from') ? 'an input object needs `from`'
        : spec.type !== undefined && !(PortTypeSpec.options as readonly unknown[]).includes(spec.type) ? `an input's type is one of ${PortTypeSpec.options.join(', ')}`
        : spec.optional !== undefined && typeof spec.optional !== 'boolean' ? "an input's `optional` is true or false"
        : undefined;
      if (problem) {
        ok = false;
        return void issue('SCHEMA', p, value, problem);
      }
      out[key] = spec as { from: string };
    });
    return ok && read ? out : undefined;
  };

  const nodeStatement = (st: VariableDeclaration): void => {
    if (st.kind !== 'const') return void unsupported(['code'], st, `\`${st.kind}\` declares a variable that may change: declare each node once, \`const <id> = agent(...)\``);
    if (st.declarations.length !== 1) return void unsupported(['code'], st.declarations[1]!, 'declare one node per `const`');
    const d = st.declarations[0]!;
    if (d.id.type !== 'Identifier') return void unsupported(['code'], d.id, 'destructuring is not allowed: `const <id> = ...`');
    const id = d.id.name;
    const path: DocPath = ['code', id];
    place(path, d.id);
    const ok = readNode(id, path, d.id, d.init!);
    if (!ok) broken.add(id);
    defined.add(id);
  };

  const readNode = (id: string, path: DocPath, at: Node, init: Expression): boolean => {
    if (RESERVED.includes(id)) return Boolean(unsupported(path, at, `\`${id}\` is a reserved name (${RESERVED.join(', ')})`));
    const call = nodeCall(init, path);
    if (!call) return false;
    const spec = CALLS[call.name];
    const args = call.expr.arguments;
    const raw: RawNode = { id };
    let ok = true;
    spec.args.forEach((arg, i) => {
      const a = args[i];
      if (!a) return;
      if (arg === 'inputs') {
        const inputs = readInputs(a, [...path, 'inputs']);
        if (inputs) raw.inputs = inputs;
        else ok = false;
      } else if (arg === 'options') {
        ok = readOptions(call.name, a, path, raw) && ok;
      } else {
        const s = values.stringArg(a, [...path, arg], `the ${arg} of ${call.name}()`);
        if (s === undefined) ok = false;
        else raw[arg] = s;
      }
    });
    if (!ok) return false;
    const checked = NodeSpec.safeParse(raw);
    if (!checked.success) {
      for (const zi of checked.error.issues) {
        const p = [...path, ...zi.path.map((s) => (typeof s === 'symbol' ? String(s) : s))];
        const unknown = zi.code === 'unrecognized_keys' ? zi.keys : undefined;
        const where = nearest(positions, unknown ? [...p, unknown[0]!] : p) ?? pos(at);
        const field = formatPath(p.slice(2));
        issue('SCHEMA', p, where, `${field ? field + ': ' : ''}${unknown ? `unknown field(s): ${unknown.join(', ')}` : zi.message}`);
        const key = zi.path[0];
        if (typeof key === 'string' && key !== 'id') delete (raw as Record<string, unknown>)[key];
      }
    }
    entries.push({ raw, path });
    return true;
  };

  const nodeCall = (init: Expression, path: DocPath): { name: CallName; expr: CallExpression } | undefined => {
    if (init.type !== 'CallExpression') return unsupported(path, init, `a \`const\` holds one call of agent(), tool() or skill(), got ${describeExpression(init)}`);
    const callee = init.callee;
    if (callee.type === 'MemberExpression') return unsupported(path, callee, 'member calls (`a.b()`) are not allowed: a node is agent(), tool() or skill()');
    if (callee.type !== 'Identifier') return unsupported(path, callee, `${describeExpression(callee as Expression)} cannot be called: a node is agent(), tool() or skill()`);
    if (callee.name === 'eval') return unsupported(path, callee, '`eval` is not allowed: the code is never run');
    if (callee.name === 'loop') return unsupported(path, callee, 'loop({...}) is a statement of its own, not a value');
    if (!isCall(callee.name)) return unsupported(path, callee, `\`${callee.name}()\` is not a node call: use agent(), tool() or skill()`);
    const spread = init.arguments.find((a) => a.type === 'SpreadElement');
    if (spread) return unsupported(path, spread, 'spread (`...`) is not allowed');
    const spec = CALLS[callee.name];
    if (init.arguments.length < spec.required || init.arguments.length > spec.args.length) {
      return unsupported(path, init, `${FORM[callee.name]} takes ${spec.required} or ${spec.args.length} arguments, got ${init.arguments.length}`);
    }
    return { name: callee.name, expr: init };
  };

  const readOptions = (call: CallName, arg: Expression | SpreadElement, path: DocPath, raw: RawNode): boolean => {
    if (arg.type !== 'ObjectExpression') return Boolean(unsupported(path, arg, `the options of ${call}() are an object literal, got ${describeExpression(arg)}`));
    const options = values.literalFields(arg as ObjectExpression, path);
    if (!options) return false;
    let ok = true;
    for (const key of Object.keys(options)) {
      const argument = CALLS[call].args.find((a) => a === key);
      if (NOT_OPTIONS.includes(key) || argument) {
        ok = false;
        issue('SCHEMA', [...path, key], nearest(positions, [...path, key]) ?? pos(arg), argument ? `\`${key}\` is an argument of ${FORM[call]}, not an option` : `\`${key}\` is not an option: the call itself gives the node's ${key === 'inputs' ? 'inputs' : 'id and kind'}`);
        continue;
      }
      (raw as Record<string, unknown>)[key] = options[key];
    }
    return ok;
  };

  const loopStatement = (call: CallExpression, k: number): void => {
    const path: DocPath = ['code', 'loop', k];
    place(path, call);
    const arg = call.arguments[0];
    if (call.arguments.length !== 1 || !arg || arg.type !== 'ObjectExpression') {
      return void unsupported(path, call, 'loop() takes one object: loop({ from: <id>, to: <id>, port?, while?, max_iterations: <n> })');
    }
    const fields = values.literalFields(arg, path, {
      from: (v) => (v.type === 'Identifier' ? ref(v, [...path, 'from']) : unsupported([...path, 'from'], v, 'loop `from` names a node: `from: <id>`')),
      to: (v) => (v.type === 'Identifier' ? ref(v, [...path, 'to']) : unsupported([...path, 'to'], v, 'loop `to` names a node: `to: <id>`')),
    });
    if (!fields) return;
    const bad = Object.keys(fields).filter((f) => !LOOP_FIELDS.includes(f));
    if (bad.length) return void issue('SCHEMA', path, arg, `unknown field(s) of loop(): ${bad.join(', ')} (fields: ${LOOP_FIELDS.join(', ')})`);
    const { from, to, port, max_iterations: max } = fields;
    const cond = fields.while;
    if (!Object.hasOwn(fields, 'from') || !Object.hasOwn(fields, 'to')) return void issue('SCHEMA', path, arg, 'loop() needs `from` (the node whose output decides) and `to` (the node it goes back to)');
    if (typeof from !== 'string' || typeof to !== 'string') return; // reported, or a rejected node
    for (const [key, v, want] of [['port', port, 'a port name'], ['while', cond, 'a condition such as \'verdict == "revise"\'']] as const) {
      if (v !== undefined && (typeof v !== 'string' || v === '')) return void issue('SCHEMA', [...path, key], nearest(positions, [...path, key]) ?? pos(arg), `loop \`${key}\` is ${want} (a non-empty string)`);
    }
    if (max === undefined) return void issue('UNBOUNDED_CYCLE', path, call, `loop ${from} -> ${to} has no max_iterations: an unbounded loop is rejected; give it \`max_iterations: <n>\``);
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 100) {
      return void issue('SCHEMA', [...path, 'max_iterations'], nearest(positions, [...path, 'max_iterations']) ?? pos(arg), 'loop `max_iterations` is a whole number from 1 to 100');
    }
    const condPos = positions.get(formatPath([...path, 'while']));
    if (condPos) positions.set(formatPath([...path, 'condition']), condPos);
    edges.push({ from, to, type: 'data', port: port as string | undefined, condition: cond as string | undefined, maxIterations: max, path, fromPath: [...path, 'from'], toPath: [...path, 'to'] });
  };

  const returnStatement = (st: Extract<Statement, { type: 'ReturnStatement' }>): void => {
    const path: DocPath = ['code', 'return'];
    place(path, st);
    if (!st.argument) return void issue('BAD_ANSWER', path, st, 'return what the workflow answers: `return <id>` or `return <id>.<field>`');
    const r = ref(st.argument, path);
    if (r === undefined) return;
    const head = r.split('.')[0]!;
    if (!defined.has(head)) {
      const why = head === 'task' ? 'not a task field' : `and there is no node "${head}"`;
      return void issue('BAD_ANSWER', path, st.argument, `return ${r}: the answer is a node's output, ${why} (nodes: ${[...defined].join(', ') || 'none'})`);
    }
    answer = r;
  };

  let loops = 0;
  let returned: Node | undefined;
  for (const st of program.body) {
    if (returned) {
      unsupported(['code'], st, `nothing may follow \`return\` (at ${pos(returned).line}:${pos(returned).column})`);
      continue;
    }
    if (st.type === 'VariableDeclaration') nodeStatement(st);
    else if (st.type === 'ExpressionStatement') {
      const call = st.expression;
      if (call.type === 'CallExpression' && call.callee.type === 'Identifier' && call.callee.name === 'loop') loopStatement(call, loops++);
      else expressionStatement(st, unsupported);
    } else if (st.type === 'ReturnStatement') {
      returnStatement(st);
      returned = st;
    } else if (st.type !== 'EmptyStatement') statementOutside(st, issue);
  }
  if (entries.length === 0 && issues.length === 0) issue('NO_NODES', ['code'], { line: 1, column: 1 }, 'the code makes no node: call agent(), tool() or skill()');
  return { entries, edges, answer, issues, positions };
}

/** An expression used as a statement that is not loop(...): always outside the subset. */
function expressionStatement(st: ExpressionStatement, unsupported: (path: DocPath, at: Node, message: string) => undefined): void {
  const e = st.expression;
  if (e.type === 'AssignmentExpression' || e.type === 'UpdateExpression') {
    return void unsupported(['code'], e, 'assignment to an existing variable is not allowed: every value is a new `const`');
  }
  if (e.type === 'CallExpression') {
    const callee = e.callee;
    if (callee.type === 'Identifier' && isCall(callee.name)) return void unsupported(['code'], e, `a node call is given a name: \`const <id> = ${callee.name}(...)\``);
    if (callee.type === 'Identifier' && callee.name === 'eval') return void unsupported(['code'], callee, '`eval` is not allowed: the code is never run');
    if (callee.type === 'MemberExpression') return void unsupported(['code'], callee, 'member calls (`a.b()`) are not allowed');
    if (callee.type === 'Identifier') return void unsupported(['code'], callee, `\`${callee.name}()\` is not part of the subset (calls: agent, tool, skill, loop)`);
  }
  unsupported(['code'], e, `${describeExpression(e)} is not a statement of the subset (${SUBSET})`);
}

/** A statement of another kind than const, loop(...), return or `;`: rejected, with its own reason. */
function statementOutside(st: Statement | ModuleDeclaration, issue: (c: SpecIssueCode, path: DocPath, at: Node, message: string) => undefined): void {
  const say = (message: string) => issue('CODE_UNSUPPORTED', ['code'], st, message);
  switch (st.type) {
    case 'WhileStatement':
    case 'DoWhileStatement':
      return void issue('UNBOUNDED_CYCLE', ['code'], st, 'a `while` loop has no bound: go back with loop({ from, to, while, max_iterations }) instead');
    case 'ForStatement':
    case 'ForInStatement':
    case 'ForOfStatement':
      return void say('`for` is not part of the subset: a loop is loop({ from, to, while, max_iterations })');
    case 'FunctionDeclaration':
      return void say('function declarations are not allowed: every node is `const <id> = agent(...)`, `tool(...)` or `skill(...)`');
    case 'ClassDeclaration':
      return void say('classes are not allowed');
    case 'ImportDeclaration':
      return void say('`import` is not allowed: the code uses only agent, tool, skill, loop and task');
    case 'ExportNamedDeclaration':
    case 'ExportDefaultDeclaration':
    case 'ExportAllDeclaration':
      return void say('`export` is not allowed: `return` gives the answer');
    case 'IfStatement':
      return void say("`if` is not part of the subset: a condition is a loop's `while`");
    default:
      return void say(`${st.type.replace(/Statement$/, '').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()} statements are not part of the subset (${SUBSET})`);
  }
}

/** The position of the deepest prefix of `path` that was placed. */
function nearest(positions: ReadonlyMap<string, CodePosition>, path: DocPath): CodePosition | undefined {
  for (let n = path.length; n >= 1; n--) {
    const p = positions.get(formatPath(path.slice(0, n)));
    if (p) return p;
  }
  return undefined;
}

/**
 * Gives each issue under `['code', ...]` that has no position yet the position of the deepest
 * placed prefix of its path: `inCode`, and `code <line>:<column>: ` at the head of the message.
 * Used by the parse stage and by compileWorkflow for the issues the later stages find.
 */
export function placeInCode(issues: SpecIssue[], positions: ReadonlyMap<string, CodePosition> | undefined): SpecIssue[] {
  if (!positions) return issues;
  return issues.map((i) => {
    if (i.inCode || i.path[0] !== 'code') return i;
    const p = nearest(positions, i.path);
    return p ? { ...i, message: `code ${p.line}:${p.column}: ${i.message}`, inCode: p } : i;
  });
}
