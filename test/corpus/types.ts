/**
 * The standing corpus of malformed inputs (test/corpus.test.ts runs every entry). An entry is
 * the input, the error code it must get, and the place its message must name. Four ways in:
 *
 * - `workflow`: workflow file bytes, loaded by `loadWorkflowFile` (what `run`, `rollouts`,
 *   `train-loop` and the host load); the `SpecError` must carry an issue with `code`, the
 *   file, and a line (`line` when given).
 * - `cli`: files written into the entry's folder and an argv for `main` (cli/main.ts), the CLI's
 *   own entry point, in process; the exit status must be 1 or 2 and stderr must hold `[code]`
 *   and `place`. `spawn: true` entries also run as a child process (`node bin/flowlab.js`).
 * - `gguf`: a model file made from bytes (or from the shared tiny model through Flowlab's GGUF
 *   writer), checked by the reader the CLI and host use; the error must have `code` and name the file.
 * - `api`: a lab API call over HTTP to `flowlab serve`'s server (the browser host); the reply must
 *   be a 4xx with `error.code`, `error.field` when given, and a message containing `place`. With
 *   `target: 'model'`, a chat-completions request to `flowlab serve-model`'s server instead.
 *
 * `{dir}` in argv, place and file contents is the entry's folder, `{db}` a seeded database
 * (its rows are compared before and after each entry), `{model}` the shared tiny model.
 */

/** What a template may refer to. */
export interface Ctx {
  dir: string;
  db: string;
  model: string;
}

export type Bytes = string | Buffer;

/** File name (relative to the entry's folder) -> content; a function makes it (e.g. a GGUF). */
export type Files = Record<string, Bytes | ((ctx: Ctx) => Bytes | Promise<Bytes>)>;

interface Base {
  /** Unique within the corpus: `<area>/<what>`. */
  id: string;
}

export interface WorkflowEntry extends Base {
  via: 'workflow';
  bytes: Bytes;
  code: string;
  line?: number;
}

export interface CliEntry extends Base {
  via: 'cli';
  files?: Files;
  argv: string[];
  code: string;
  place: string;
  /** 2 for usage errors, else 1 (default). */
  exit?: 1 | 2;
  spawn?: boolean;
}

export interface GgufEntry extends Base {
  via: 'gguf';
  /** The model file's bytes (given the tiny model's path). */
  make: (tinyModel: string) => Bytes | Promise<Bytes>;
  /** `header`: readGguf (models/gguf); `checked`: readCheckedGgufInfo (header + finite weights). */
  reader: 'header' | 'checked';
  code: string;
  /** Besides the file, what the message must contain. */
  place?: string;
  /** Needs the shared tiny model. */
  needsModel?: boolean;
}

export interface ApiEntry extends Base {
  via: 'api';
  /** `lab` (default): `POST /api/<method>` of the browser host. `model`: `POST /v1/<method>` of `flowlab serve-model`'s server, answered in OpenAI's error shape (`code` is compared with the error's `type`, `field` with its `param`). */
  target?: 'lab' | 'model';
  method: string;
  /** A JSON payload, or `raw` bytes sent as the body as they are. */
  payload?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
  status: number;
  code: string;
  field?: string;
  place: string;
}

export type CorpusEntry = WorkflowEntry | CliEntry | GgufEntry | ApiEntry;

/** Replaces `{dir}`, `{db}` and `{model}`. */
export function fill(s: string, ctx: Ctx): string {
  return s.replaceAll('{dir}', ctx.dir).replaceAll('{db}', ctx.db).replaceAll('{model}', ctx.model);
}
