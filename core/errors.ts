/**
 * The one base of Flowlab's typed errors. Every area has its own subclass and a closed union of
 * codes (the table is in docs/architecture.md): `StoreError` (core/store/errors.ts),
 * `DatasetError` (core/tasks), `ModelError` (core/model), `SpecError` and `ConditionError`
 * (core/workflow), `NodeFailure` (core/engine, codes in core/trace), `ToolError` and `CorpusError` (core/tools),
 * `FaultSpecError` (core/faults), `ApiError` (core/api), `WhoAndWhenError` and
 * `AttributionError` (core/blame/attribution), `ModeError` (core/rollouts), `DistillError` and
 * `CardsImportError` (core/distill), `TrainingError` (core/training), `OtelError` (core/otel),
 * `GgufError` (models/gguf).
 *
 * The message is complete on its own (it names what and where) and is what people read; `code`
 * is what programs and tests match; `location` repeats the where as fields when it is known.
 * The CLI maps errors to exit statuses and printed lines in one table (cli/errors.ts).
 */

/** Where an error is, as far as known. Lines and columns are 1-based. */
export interface ErrorLocation {
  /** The file concerned (a path as the user gave it). */
  file?: string;
  line?: number;
  /** Column in UTF-16 units of the line (or of a one-line input such as a condition). */
  col?: number;
  /** A payload or flag field at fault, as a dotted path (e.g. `inject.0`). */
  field?: string;
  /** A path inside a document (e.g. `nodes[2].role`). */
  path?: string;
}

/**
 * A Flowlab error: a stable `code` from its area's closed union `C`, a human `message`, and an
 * optional `location`. Subclasses fix `name` (kept explicit so bundling cannot mangle it).
 */
export class FlowlabError<C extends string = string> extends Error {
  override readonly name: string = 'FlowlabError';
  readonly code: C;
  readonly location: ErrorLocation;

  constructor(code: C, message: string, location: ErrorLocation = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.location = location;
  }
}

/**
 * A Flowlab error placed by one string, `where`, kept as the area writes it (a file, `file:line`,
 * a model reference, an experiment or run id). Its `location` is `where` read by the class's
 * static `locate` (default: locationOf, `file` or `file:line`); a subclass whose `where` is not
 * always a file overrides `locate`. Used by DatasetError, ModelError and StoreError.
 */
export class WhereError<C extends string = string> extends FlowlabError<C> {
  override readonly name: string = 'WhereError';

  constructor(
    code: C,
    message: string,
    /** The place concerned, as the area writes it (see the subclass). */
    readonly where?: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, (new.target as typeof WhereError).locate(where), options);
  }

  /** `where` as a location: `file` or `file:line` (locationOf). */
  static locate(where: string | undefined): ErrorLocation {
    return locationOf(where);
  }
}

/** Whether `err` is a Flowlab error (of any area). */
export function isFlowlabError(err: unknown): err is FlowlabError {
  return err instanceof FlowlabError;
}

/**
 * `file` or `file:line` (1-based line, as DatasetError and WhoAndWhenError write `where`) as a
 * location. A Windows drive letter (`C:\x`) is not read as a line.
 */
export function locationOf(where: string | undefined): ErrorLocation {
  if (where === undefined) return {};
  const m = /^(.+):(\d+)$/.exec(where);
  return m ? { file: m[1]!, line: Number(m[2]) } : { file: where };
}

/** The message of a thrown value: an `Error`'s `message`, anything else as `String(value)`. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
