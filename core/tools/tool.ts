import { FlowlabError } from '../errors.ts';
import type { JsonSchema } from '../model/provider.ts';

/** The value types a tool input port accepts. `any` accepts every defined value. */
export type ToolInputType = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'any';

/** One input port of a tool. */
export interface ToolInputSpec {
  type: ToolInputType;
  /** When true the port may be left unwired/undefined. Default false. */
  optional?: boolean;
  description?: string;
  /**
   * The values the port accepts, when it takes one of a fixed set (a `string` port). A value
   * outside it is a `type` problem (checkToolInputs); an upstream contract whose enum is not a
   * subset of it is a wiring fault (PORT_TYPE_MISMATCH).
   */
  enum?: readonly string[];
}

/** What a tool run gets besides its inputs. */
export interface ToolContext {
  /** Cancellation; long-running tools should stop when it fires. */
  signal?: AbortSignal;
}

/**
 * A deterministic piece of code a workflow `tool` node runs (calculator, extractor, ...).
 * Same inputs, same output. Failures are thrown as `ToolError`: they are the node's execution
 * faults (the runner's), unlike wiring faults (unknown tool, missing port), which the engine finds.
 */
export interface Tool {
  /** Unique name in a registry: lowercase letters, digits and `_`, starting with a letter. */
  name: string;
  /** One or two sentences for people and for the designer role's prompt. */
  description: string;
  /** Input ports by name. */
  inputs: Record<string, ToolInputSpec>;
  /** JSON Schema of what `run` returns. */
  output: JsonSchema;
  run(inputs: Record<string, unknown>, ctx: ToolContext): unknown | Promise<unknown>;
}

/**
 * Stable tool error codes. Run-time (execution faults): `BAD_INPUT`, `PARSE_ERROR`,
 * `DIVISION_BY_ZERO`, `NOT_FINITE`, `ABORTED`, `NO_CORPUS`. Registration (programming errors, raised by
 * `ToolRegistry.register`): `DUPLICATE_TOOL`, `BAD_TOOL`.
 */
export type ToolErrorCode =
  | 'BAD_INPUT' // an input is missing, of the wrong type, empty or too long
  | 'PARSE_ERROR' // the input text does not parse (column given)
  | 'DIVISION_BY_ZERO' // `/` or `%` by zero (column given)
  | 'NOT_FINITE' // a result overflowed to Infinity or is NaN (column given)
  | 'ABORTED' // the run was cancelled through its signal
  | 'NO_CORPUS' // `retrieve` was called with no corpus loaded (--corpus)
  | 'DUPLICATE_TOOL' // a registry already has a tool of that name
  | 'BAD_TOOL' // a tool definition is malformed (e.g. its name)
  | 'NO_SANDBOX'; // code_runner was built without a code sandbox

/**
 * A tool failure. `message` is `"<CODE>: <detail>"`, e.g.
 * `PARSE_ERROR: unexpected ')' at column 7 in "3 + 4))"`; `detail` is the part after the code.
 * `column` (1-based, in UTF-16 units of the input text) is set where a position is known.
 */
export class ToolError extends FlowlabError<ToolErrorCode> {
  override readonly name = 'ToolError';
  readonly detail: string;
  readonly column?: number;
  /** The tool that failed, where known. */
  readonly tool?: string;
  constructor(
    code: ToolErrorCode,
    detail: string,
    opts: { column?: number; tool?: string; cause?: unknown } = {},
  ) {
    super(code, `${code}: ${detail}`, opts.column !== undefined ? { col: opts.column } : {}, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.detail = detail;
    if (opts.column !== undefined) this.column = opts.column;
    if (opts.tool !== undefined) this.tool = opts.tool;
  }
}

/** One mismatch between a tool's declared input ports and the values given. */
export interface ToolInputProblem {
  port: string;
  kind: 'missing' | 'type' | 'unknown';
  message: string;
}

/**
 * Checks `inputs` against `tool.inputs`: required ports present (not undefined), values of the
 * declared type (`number` must be finite; `object` is a non-array, non-null object) and, where
 * the port declares an `enum`, one of its values; no ports the
 * tool does not declare. Pure; returns [] when all is well. The engine decides whose fault a
 * problem is (a missing or unknown port is usually wiring).
 */
export function checkToolInputs(tool: Pick<Tool, 'name' | 'inputs'>, inputs: Record<string, unknown>): ToolInputProblem[] {
  const problems: ToolInputProblem[] = [];
  for (const [port, spec] of Object.entries(tool.inputs)) {
    const value = inputs[port];
    if (value === undefined) {
      if (!spec.optional) problems.push({ port, kind: 'missing', message: `tool '${tool.name}' needs input '${port}' (${spec.type})` });
      continue;
    }
    if (!matchesType(value, spec.type)) {
      problems.push({ port, kind: 'type', message: `tool '${tool.name}' input '${port}' must be ${spec.type}, got ${typeName(value)}` });
    } else if (spec.enum && !spec.enum.includes(value as string)) {
      problems.push({ port, kind: 'type', message: `tool '${tool.name}' input '${port}' must be one of ${spec.enum.join(', ')}, got ${JSON.stringify(value)}` });
    }
  }
  for (const port of Object.keys(inputs)) {
    if (!Object.hasOwn(tool.inputs, port)) {
      problems.push({ port, kind: 'unknown', message: `tool '${tool.name}' has no input '${port}'; it has: ${Object.keys(tool.inputs).join(', ') || '(none)'}` });
    }
  }
  return problems;
}

function matchesType(value: unknown, type: ToolInputType): boolean {
  switch (type) {
    case 'any': return true;
    case 'string': return typeof value === 'string';
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'boolean': return typeof value === 'boolean';
    case 'array': return Array.isArray(value);
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value);
    default: return type satisfies never;
  }
}

/** A short name of a value's type for messages: `string`, `number`, `array`, `null`, ... */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
