/**
 * Prompt templates. `{{port}}`, `{{port.field}}`, `{{task.field}}`, `{{hints}}`, `{{instructions}}`, and sections
 * `{{#port}}...{{/port}}` rendered only when the value is present and non-empty (e.g. loop feedback).
 * Objects render as compact JSON; null/undefined render as an empty string.
 */
const TOKEN = /\{\{\s*([#/]?)\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}/g;

export interface TemplateRef {
  /** First path segment: a port name, `task`, `hints` or `instructions`. */
  root: string;
  path: string[];
  /** 0-based character offset in the template. */
  offset: number;
}

/** Every placeholder a template references (sections included). */
export function templateRefs(template: string): TemplateRef[] {
  const refs: TemplateRef[] = [];
  for (const m of template.matchAll(TOKEN)) {
    const parts = m[2]!.split('.');
    refs.push({ root: parts[0]!, path: parts.slice(1), offset: m.index });
  }
  return refs;
}

/**
 * Checks the template: every `{{` opens a placeholder that is closed (`{{task.question` is an
 * error, not text sent as is), every `{{...}}` is a placeholder name, and section tags are
 * balanced. Returns a message naming the offset, or null.
 */
export function templateProblem(template: string): string | null {
  const starts = new Set([...template.matchAll(TOKEN)].map((m) => m.index));
  for (let at = template.indexOf('{{'); at >= 0; at = template.indexOf('{{', at + 2)) {
    if (starts.has(at)) continue;
    const close = template.indexOf('}}', at + 2);
    const text = template.slice(at, close < 0 ? Math.min(template.length, at + 40) : close + 2);
    if (close < 0) return `placeholder ${JSON.stringify(text)} at offset ${at} is never closed with }}`;
    return `${JSON.stringify(text)} at offset ${at} is not a placeholder ({{name}} or {{name.field}}, letters, digits, _ and -)`;
  }
  const stack: string[] = [];
  for (const m of template.matchAll(TOKEN)) {
    if (m[1] === '#') stack.push(m[2]!);
    else if (m[1] === '/') {
      const open = stack.pop();
      if (open !== m[2]) return `section {{/${m[2]}}} at offset ${m.index} does not close ${open ? `{{#${open}}}` : 'any open section'}`;
    }
  }
  return stack.length ? `section {{#${stack[stack.length - 1]}}} is never closed` : null;
}

function lookup(scope: Record<string, unknown>, dotted: string): unknown {
  let v: unknown = scope;
  for (const p of dotted.split('.')) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, p)) return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

function show(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

const present = (v: unknown) => !(v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0));

/** Renders a template against a scope (`{port: value, task: {...}, hints: '...'}`). */
export function renderTemplate(template: string, scope: Record<string, unknown>): string {
  // Sections first (non-nested with the same name), innermost by regex laziness.
  let text = template.replace(
    /\{\{\s*#\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}([\s\S]*?)\{\{\s*\/\s*\1\s*\}\}/g,
    (_m, name: string, inner: string) => (present(lookup(scope, name)) ? inner : ''),
  );
  text = text.replace(TOKEN, (_m, sigil: string, name: string) => (sigil ? '' : show(lookup(scope, name))));
  return text;
}
