import { readFileSync } from 'node:fs';
import { isEndpointRef } from '../model/endpoint.ts';
import path from 'node:path';
import { isNode, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document } from 'yaml';
import { bracketDepth, MAX_NESTING_DEPTH, nestingDepth } from '../limits.ts';
import { decodeUtf8 } from '../utf8.ts';
import { schemaWarnings } from './schemaSupport.ts';
import type { ZodError } from 'zod';
import type { CheckRegistry } from './checks.ts';
import { compileWorkflow, type ToolLookup } from './compile.ts';
import { SpecError, type SpecIssue } from './errors.ts';
import type { DocPath, Graph } from './graph.ts';
import { WorkflowSpec } from './spec.ts';

export interface LoadOptions {
  /** File name used in messages and to resolve relative model paths. */
  file?: string;
  tools: ToolLookup;
  checks?: CheckRegistry;
}

export interface LoadedWorkflow {
  graph: Graph;
  /** The document text as given (stored with experiments so they can be resumed and replayed). */
  text: string;
  file?: string;
  /**
   * Located warnings (codes `LOSSY_NUMBER`, `UNENFORCED_KEYWORD`): the workflow loads, but
   * something in it may not mean what was written. Faces print them (the CLI on stderr).
   */
  warnings: SpecIssue[];
}

/**
 * Parses and validates a workflow (YAML or JSON text) into a Graph.
 * Throws `SpecError` listing every problem with file, line, column and document path.
 */
export function parseWorkflow(text: string, opts: LoadOptions): LoadedWorkflow {
  // A NUL is no text: YAML would keep it in a string, and it would end up in prompts and file names.
  const nul = text.indexOf('\0');
  if (nul >= 0) {
    const before = text.slice(0, nul).split('\n');
    throw new SpecError([{ code: 'NUL_CHARACTER', path: [], file: opts.file, line: before.length, column: before.at(-1)!.length + 1, message: `a NUL character (U+0000) at character offset ${nul}: a workflow is text` }], opts.file);
  }
  // The YAML parser recurses per nesting level: deep input is refused before it overflows the stack.
  const deep = tooDeepAt(text);
  if (deep) throw new SpecError([{ code: 'TOO_DEEP', path: [], file: opts.file, ...deep, message: `nested deeper than ${MAX_NESTING_DEPTH} levels, the most a workflow may have` }], opts.file);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const locate = (issues: SpecIssue[]): SpecIssue[] =>
    issues.map((i) => ({ ...i, file: opts.file, ...(codePosition(doc, lineCounter, text, i) ?? position(doc, lineCounter, i.path)) }));

  if (doc.errors.length) {
    throw new SpecError(
      doc.errors.map((e) => {
        const pos = e.linePos?.[0];
        let message = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
        if (e.code === 'DUPLICATE_KEY') {
          const key = /^\s*-?\s*["']?([^"':\n]+)/.exec(text.slice(e.pos[0]))?.[1]?.trim();
          if (key) message += `: "${key}" appears twice`;
        }
        const tooDeep = /Maximum call stack size exceeded/.test(message);
        if (tooDeep) message = `nested deeper than the YAML parser can read (at most ${MAX_NESTING_DEPTH} levels are allowed)`;
        return { code: tooDeep ? 'TOO_DEEP' : 'YAML_SYNTAX', path: [], message, file: opts.file, line: pos?.line, column: pos?.col };
      }),
      opts.file,
    );
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // An unresolved alias names itself last in the message; its first use is the place.
    const alias = /: (\S+)$/.exec((e as Error).message)?.[1];
    const at = alias ? text.indexOf(`*${alias}`) : -1;
    const pos = at >= 0 ? lineCounter.linePos(at) : undefined;
    throw new SpecError([{ code: 'YAML_SYNTAX', path: [], file: opts.file, line: pos?.line, column: pos?.col, message: `cannot expand the document: ${(e as Error).message}` }], opts.file);
  }
  if (raw === null || raw === undefined) {
    throw new SpecError([{ code: 'SCHEMA', path: [], file: opts.file, line: 1, column: 1, message: 'the workflow is empty (no YAML or JSON document)' }], opts.file);
  }
  if (nestingDepth(raw) > MAX_NESTING_DEPTH) {
    throw new SpecError([{ code: 'TOO_DEEP', path: [], file: opts.file, message: `nested deeper than ${MAX_NESTING_DEPTH} levels, the most a workflow may have` }], opts.file);
  }
  // jitless: zod's compiled fast path (code generated with `new Function` on an object schema's
  // first parse) pays off over many parses; a process parses its workflow once or a few times,
  // and the generating cost ~2-3 ms of a command's start. Same result either way.
  const parsed = WorkflowSpec.safeParse(raw, { jitless: true });
  if (!parsed.success) throw new SpecError(locate(zodIssues(parsed.error)), opts.file);

  const { graph, issues } = compileWorkflow(parsed.data, { tools: opts.tools, checks: opts.checks });
  if (!graph) throw new SpecError(locate(issues), opts.file);
  if (opts.file) {
    const base = path.dirname(opts.file);
    for (const m of graph.models.values()) if (m.path && !path.isAbsolute(m.path) && !isEndpointRef(m.path)) m.path = path.resolve(base, m.path);
  }
  const warnings: SpecIssue[] = [...lossyNumbers(doc, lineCounter, text, opts.file)];
  for (const node of graph.nodes.values()) {
    const schema = node.contract?.schema;
    if (!schema) continue;
    const at = [...node.path, 'output', 'schema'];
    for (const w of schemaWarnings(schema)) warnings.push({ code: 'UNENFORCED_KEYWORD', path: [...at, ...w.path], message: `output schema: ${w.message}`, file: opts.file, ...position(doc, lineCounter, [...at, ...w.path]) });
  }
  return { graph, text, file: opts.file, warnings };
}

/** The line and column where bracket nesting first passes MAX_NESTING_DEPTH (or indentation does), or undefined. */
function tooDeepAt(text: string): { line: number; column: number } | undefined {
  if (bracketDepth(text) <= MAX_NESTING_DEPTH && !deepIndentation(text)) return undefined;
  let depth = 0;
  let line = 1;
  let col = 0;
  for (const c of text) {
    col++;
    if (c === '\n') {
      line++;
      col = 0;
    } else if (c === '{' || c === '[') {
      if (++depth > MAX_NESTING_DEPTH) return { line, column: col };
    } else if (c === '}' || c === ']') depth = Math.max(0, depth - 1);
  }
  const indented = deepIndentation(text);
  return indented ? { line: indented, column: 1 } : { line: 1, column: 1 };
}

/** The first line whose indentation implies more than MAX_NESTING_DEPTH block levels (one level per 1+ spaces of indent gained), or 0. */
function deepIndentation(text: string): number {
  const stack: number[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.trim() === '' || l.trimStart().startsWith('#')) continue;
    const indent = l.length - l.trimStart().replace(/^(- )+/, '').length;
    while (stack.length > 0 && stack[stack.length - 1]! >= indent) stack.pop();
    stack.push(indent);
    if (stack.length > MAX_NESTING_DEPTH + 1) return i + 1;
  }
  return 0;
}

/**
 * Plain YAML scalars read as numbers that lose what was written: trailing zeros of a fraction
 * (`1.10` is 1.1, `2.0` is 2), leading zeros (`007` is 7), or more digits than a double keeps
 * (`12345678901234567890`). Quoting keeps such a value as text.
 */
function lossyNumbers(doc: Document, lc: LineCounter, text: string, file: string | undefined): SpecIssue[] {
  const out: SpecIssue[] = [];
  visit(doc, {
    Scalar(_key, node, ancestors) {
      if (typeof node.value !== 'number' || node.type !== 'PLAIN' || !node.range) return;
      const src = text.slice(node.range[0], node.range[1]).trim();
      const digits = src.replace(/^[+-]/, '').replace(/[eE].*$/, '').replace('.', '').replace(/^0+/, '');
      const lossy = /\.\d*0$/.test(src) || /^[+-]?0\d/.test(src) || (/^[+-]?\d+(\.\d+)?$/.test(src) && digits.length > 15 && String(node.value) !== src);
      if (!lossy) return;
      const chain = [...ancestors, node];
      const keyPath: Array<string | number> = [];
      chain.forEach((a, i) => {
        if (isPair(a) && isScalar(a.key)) keyPath.push(String(a.key.value));
        else if (isSeq(a)) keyPath.push(a.items.indexOf(chain[i + 1] as never));
      });
      const { line, col } = lc.linePos(node.range[0]);
      out.push({
        code: 'LOSSY_NUMBER', path: keyPath, file, line, column: col,
        message: `${src} reads as the number ${String(node.value)}, not as written; quote it (${JSON.stringify(src)}) to keep it as text`,
      });
    },
  });
  return out;
}

/** Reads a workflow file; a missing file is reported as a SpecError naming it. */
export function loadWorkflowFile(file: string, opts: Omit<LoadOptions, 'file'>): LoadedWorkflow {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new SpecError([code === 'ENOENT'
      ? { code: 'FILE_NOT_FOUND', path: [], file, message: `workflow file not found: ${file}` }
      : { code: 'FILE_UNREADABLE', path: [], file, message: code === 'EISDIR' ? `${file} is a directory, not a workflow file` : `cannot read workflow file ${file}: ${(e as Error).message}` }], file);
  }
  const decoded = decodeUtf8(bytes);
  if ('fault' in decoded) {
    const f = decoded.fault;
    throw new SpecError([{ code: 'NOT_UTF8', path: [], file, line: f.line, column: f.column, message: `not UTF-8 text (byte 0x${f.byte} at byte offset ${f.offset}); save the workflow as UTF-8` }], file);
  }
  return parseWorkflow(decoded.text, { ...opts, file });
}

function zodIssues(err: ZodError): SpecIssue[] {
  return err.issues.map((i) => {
    const p = i.path.map((s) => (typeof s === 'symbol' ? String(s) : s)) as DocPath;
    let message = i.message;
    if (i.code === 'unrecognized_keys') message = `unknown field(s): ${i.keys.join(', ')}`;
    else if (i.code === 'invalid_type' && /received undefined/.test(i.message)) message = `missing required field "${String(p[p.length - 1])}"`;
    return { code: 'SCHEMA' as const, path: p, message };
  });
}

/** Line/column (1-based) of the deepest existing YAML node along `p` (also core/studies/plan.ts's). */
export function position(doc: Document, lc: LineCounter, p: DocPath): { line?: number; column?: number } {
  for (let n = p.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(p.slice(0, n), true);
    if (isNode(node) && node.range) {
      // For a map value, point at its key when possible.
      const { line, col } = lc.linePos(node.range[0]);
      return { line, column: col };
    }
  }
  return {};
}

/**
 * File line/column of an issue inside a code block (`inCode`) written as a YAML literal block
 * (`code: |`): the block's lines follow its header line, each indented alike, so code line L,
 * column C sits at file line header + L, column indent + C. Undefined for any other scalar
 * (quoted, folded, JSON strings: escapes and folding move the text) or an explicit indentation
 * indicator; then the code block's own position stands.
 */
function codePosition(doc: Document, lc: LineCounter, text: string, issue: SpecIssue): { line: number; column: number } | undefined {
  if (!issue.inCode || issue.path[0] !== 'code') return undefined;
  const node = doc.get('code', true);
  if (!isScalar(node) || node.type !== 'BLOCK_LITERAL' || !node.range) return undefined;
  const headerEnd = text.indexOf('\n', node.range[0]);
  if (headerEnd < 0 || /\d/.test(text.slice(node.range[0], headerEnd).replace(/#.*/, ''))) return undefined;
  const indent = /^( *)\S/m.exec(text.slice(headerEnd + 1, node.range[1]))?.[1]?.length;
  if (indent === undefined) return undefined;
  return { line: lc.linePos(node.range[0]).line + issue.inCode.line, column: indent + issue.inCode.column };
}
