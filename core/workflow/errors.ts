import type { DocPath } from './graph.ts';
import { FlowlabError } from '../errors.ts';

/** Stable codes of workflow spec problems; tests assert these. */
export type SpecIssueCode =
  | 'FILE_NOT_FOUND'
  | 'FILE_UNREADABLE'
  // Not UTF-8 text: the first invalid byte's line, column and byte offset are given.
  | 'NOT_UTF8'
  // A NUL character (U+0000) in the text: its line, column and character offset are given.
  | 'NUL_CHARACTER'
  // Nested deeper than MAX_NESTING_DEPTH (core/limits.ts).
  | 'TOO_DEEP'
  | 'YAML_SYNTAX'
  | 'SCHEMA'
  | 'MIXED_NOTATION'
  | 'NO_NODES'
  | 'DUPLICATE_ID'
  | 'UNKNOWN_ROLE'
  | 'MISSING_ROLE'
  | 'UNKNOWN_NODE'
  | 'DANGLING_EDGE'
  | 'UNBOUNDED_CYCLE'
  | 'UNKNOWN_TOOL'
  | 'UNKNOWN_PORT'
  | 'MISSING_PORT'
  | 'PORT_TYPE_MISMATCH'
  | 'UNKNOWN_CHECK'
  | 'UNKNOWN_SKILL'
  | 'UNKNOWN_MODEL'
  // A `models.<ref>.path` that starts with `openai:` but is not a valid endpoint reference (core/model/endpoint.ts).
  | 'BAD_ENDPOINT'
  | 'BAD_CONDITION'
  | 'BAD_TEMPLATE'
  | 'BAD_HOPS'
  | 'BAD_ANSWER'
  | 'INVALID_SCHEMA'
  | 'SELF_LOOP'
  // Designs (core/design): more nodes or loops than the design stage's budget.
  | 'OVER_BUDGET'
  // State machines (core/workflow/compile/notations/states.ts).
  | 'BAD_START'
  | 'BAD_TERMINAL'
  | 'UNREACHABLE_STATE'
  // Code blocks (core/workflow/compile/notations/code.ts).
  | 'CODE_SYNTAX'
  | 'CODE_UNSUPPORTED'
  // Warnings (LoadedWorkflow.warnings), never errors: a YAML number that loses what was written
  // (`1.10` reads as 1.1), a schema keyword checked only after decoding.
  | 'LOSSY_NUMBER'
  | 'UNENFORCED_KEYWORD';

/** One located problem: file, path inside the document, line/column where known, and what is wrong. */
export interface SpecIssue {
  code: SpecIssueCode;
  path: DocPath;
  message: string;
  file?: string;
  line?: number;
  column?: number;
  /** Code notation: the 1-based line and column inside the document's `code` text (also at the head of `message`). */
  inCode?: { line: number; column: number };
}

/** Formats `file:line:col path: message [CODE]`. */
export function formatIssue(issue: SpecIssue): string {
  const where = [issue.file ?? '<workflow>', issue.line, issue.column].filter((x) => x !== undefined).join(':');
  const p = issue.path.length ? ` at ${formatPath(issue.path)}` : '';
  return `${where}${p}: ${issue.message} [${issue.code}]`;
}

export function formatPath(path: DocPath): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out ? `.${seg}` : seg;
  return out;
}

/** Thrown when a workflow document is invalid; carries every issue found, not just the first. */
export class SpecError extends FlowlabError<'INVALID_WORKFLOW'> {
  override readonly name = 'SpecError';
  constructor(readonly issues: SpecIssue[], readonly file?: string) {
    super('INVALID_WORKFLOW', `Invalid workflow${file ? ` ${file}` : ''}:\n` + issues.map((i) => '  ' + formatIssue(i)).join('\n'), file !== undefined ? { file } : {});
  }
}
