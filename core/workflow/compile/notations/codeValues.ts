/**
 * Literal values of the code-block notation (core/workflow/compile/notations/code.ts), read from
 * acorn's syntax tree without evaluating anything: strings, numbers (a leading `-` included),
 * booleans, null, arrays, objects with plain keys, and template literals without `${}`.
 */
import type { Expression, Node, ObjectExpression, Property, SpreadElement } from 'acorn';
import type { SpecIssueCode } from '../../errors.ts';
import type { DocPath } from '../../graph.ts';
import type { CodePosition } from '../types.ts';

/** How the readers report: located issues (each returns undefined) and the position of each path. */
export interface CodeReporter {
  issue(code: SpecIssueCode, path: DocPath, at: Node | CodePosition, message: string): undefined;
  unsupported(path: DocPath, at: Node, message: string): undefined;
  place(path: DocPath, at: Node): void;
}

/** Marks a value that was rejected (its issue is already reported). */
const FAIL: unique symbol = Symbol('rejected');

/**
 * The literal readers, reporting through `r`. Each places every object key it reads at
 * `[...path, key]` (the property's position), so later issues on that path find their place.
 */
export function codeValues(r: CodeReporter) {
  /**
   * Calls `each(key, value, property)` for each property of an object literal, in order.
   * Rejects spread, computed keys, methods, getters and setters (CODE_UNSUPPORTED) and a key
   * given twice (SCHEMA). Returns false when any property was rejected.
   */
  const eachProperty = (obj: ObjectExpression, path: DocPath, each: (key: string, value: Expression, prop: Property) => void): boolean => {
    let ok = true;
    const seen = new Set<string>();
    for (const prop of obj.properties) {
      let problem: [Node, string] | undefined;
      let key: string | undefined;
      if (prop.type === 'SpreadElement') problem = [prop, 'spread (`...`) is not allowed'];
      else if (prop.computed) problem = [prop.key, 'computed keys (`[k]: v`) are not allowed'];
      else if (prop.kind !== 'init' || prop.method) problem = [prop, 'methods, getters and setters are not allowed'];
      else {
        key = prop.key.type === 'Identifier' ? prop.key.name : prop.key.type === 'Literal' && (typeof prop.key.value === 'string' || typeof prop.key.value === 'number') ? String(prop.key.value) : undefined;
        if (key === undefined) problem = [prop.key, 'a key is a name or a string'];
      }
      if (problem || prop.type === 'SpreadElement' || key === undefined) {
        if (problem) r.unsupported(path, problem[0], problem[1]);
        ok = false;
        continue;
      }
      if (seen.has(key)) {
        r.issue('SCHEMA', [...path, key], prop.key, `\`${key}\` appears twice`);
        ok = false;
        continue;
      }
      seen.add(key);
      r.place([...path, key], prop);
      each(key, prop.value as Expression, prop);
    }
    return ok;
  };

  /** A literal value as plain data, or FAIL (reported). Identifiers, calls and operators are not literals. */
  const literal = (e: Expression | SpreadElement | null, path: DocPath, parent: Node): unknown => {
    if (e === null) return r.unsupported(path, parent, 'holes in arrays (`[a, , b]`) are not allowed') ?? FAIL;
    switch (e.type) {
      case 'Literal':
        if (e.regex || e.bigint !== undefined) return r.unsupported(path, e, 'regular expressions and bigints are not allowed') ?? FAIL;
        return e.value;
      case 'TemplateLiteral':
        if (e.expressions.length) return r.unsupported(path, e.expressions[0]!, 'template literals with `${...}` are not allowed: a prompt reads its ports as {{port}}') ?? FAIL;
        return e.quasis[0]!.value.cooked ?? '';
      case 'UnaryExpression':
        if (e.operator === '-' && e.argument.type === 'Literal' && typeof e.argument.value === 'number') return -e.argument.value;
        break;
      case 'ArrayExpression': {
        const out = e.elements.map((x, i) => (x?.type === 'SpreadElement' ? r.unsupported(path, x, 'spread (`...`) is not allowed') ?? FAIL : literal(x, [...path, i], e)));
        return out.includes(FAIL) ? FAIL : out;
      }
      case 'ObjectExpression':
        return literalFields(e, path) ?? FAIL;
      case 'SpreadElement':
        return r.unsupported(path, e, 'spread (`...`) is not allowed') ?? FAIL;
      case 'Identifier':
        return r.unsupported(path, e, `options are literal values: \`${e.name}\` is a name${e.name === 'undefined' ? '' : ' (a node is read through inputs)'}`) ?? FAIL;
    }
    return r.unsupported(path, e, `${describeExpression(e)} is not a literal value`) ?? FAIL;
  };

  /**
   * An object literal's fields as plain data; `readers` read named fields their own way (a
   * reader returning undefined rejects the field, its issue reported). Undefined when any
   * property or value was rejected.
   */
  const literalFields = (obj: ObjectExpression, path: DocPath, readers: Record<string, (v: Expression) => unknown> = {}): Record<string, unknown> | undefined => {
    const out: Record<string, unknown> = {};
    let ok = true;
    const read = eachProperty(obj, path, (key, value, prop) => {
      const v = Object.hasOwn(readers, key) ? readers[key]!(value) ?? FAIL : literal(value, [...path, key], prop);
      if (v === FAIL) ok = false;
      else out[key] = v;
    });
    return ok && read ? out : undefined;
  };

  /** A string literal argument (or a template literal without `${}`); undefined (reported) otherwise. */
  const stringArg = (e: Expression | SpreadElement, path: DocPath, what: string): string | undefined => {
    r.place(path, e);
    if (e.type === 'Literal' && typeof e.value === 'string') return e.value;
    if (e.type === 'TemplateLiteral' && e.expressions.length === 0) return e.quasis[0]!.value.cooked ?? '';
    const hint = e.type === 'Identifier' ? `\`${e.name}\` is a name` : `got ${describeExpression(e)}`;
    return r.unsupported(path, e, `${what} is a string literal, e.g. 'solver': ${hint}`);
  };

  return { eachProperty, literal, literalFields, stringArg };
}

/** A few words naming an expression's kind, for messages (`a function`, `an assignment`, ...). */
export function describeExpression(e: Expression | SpreadElement): string {
  switch (e.type) {
    case 'Literal': return `the literal ${e.raw ?? String(e.value)}`;
    case 'Identifier': return `the name \`${e.name}\``;
    case 'TemplateLiteral': return 'a template literal';
    case 'CallExpression': return 'a call';
    case 'NewExpression': return '`new`';
    case 'ArrowFunctionExpression':
    case 'FunctionExpression': return 'a function';
    case 'ClassExpression': return 'a class';
    case 'ObjectExpression': return 'an object';
    case 'ArrayExpression': return 'an array';
    case 'AssignmentExpression': return 'an assignment';
    case 'UpdateExpression': return 'an update (`++`/`--`)';
    case 'BinaryExpression':
    case 'LogicalExpression': return `the operator \`${e.operator}\``;
    case 'UnaryExpression': return `the operator \`${e.operator}\``;
    case 'ConditionalExpression': return 'a conditional (`? :`)';
    case 'AwaitExpression': return '`await`';
    case 'MemberExpression': return 'a field access';
    case 'SpreadElement': return 'a spread (`...`)';
    default: return e.type.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  }
}
