import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isNode, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
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
}

/**
 * Parses and validates a workflow (YAML or JSON text) into a Graph.
 * Throws `SpecError` listing every problem with file, line, column and document path.
 */
export function parseWorkflow(text: string, opts: LoadOptions): LoadedWorkflow {
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
        return { code: 'YAML_SYNTAX', path: [], message, file: opts.file, line: pos?.line, column: pos?.col };
      }),
      opts.file,
    );
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw new SpecError([{ code: 'YAML_SYNTAX', path: [], file: opts.file, message: `cannot expand the document: ${(e as Error).message}` }], opts.file);
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
    for (const m of graph.models.values()) if (m.path && !path.isAbsolute(m.path)) m.path = path.resolve(base, m.path);
  }
  return { graph, text, file: opts.file };
}

/** Reads a workflow file; a missing file is reported as a SpecError naming it. */
export function loadWorkflowFile(file: string, opts: Omit<LoadOptions, 'file'>): LoadedWorkflow {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new SpecError([code === 'ENOENT'
      ? { code: 'FILE_NOT_FOUND', path: [], file, message: `workflow file not found: ${file}` }
      : { code: 'FILE_UNREADABLE', path: [], file, message: code === 'EISDIR' ? `${file} is a directory, not a workflow file` : `cannot read workflow file ${file}: ${(e as Error).message}` }], file);
  }
  return parseWorkflow(text, { ...opts, file });
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

/** Line/column (1-based) of the deepest existing YAML node along `p`. */
function position(doc: Document, lc: LineCounter, p: DocPath): { line?: number; column?: number } {
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
