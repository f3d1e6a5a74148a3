/**
 * Typed API errors and their wire form. Imports only the error base (core/errors.ts), so the
 * renderer can use it.
 *
 * Electron's `ipcRenderer.invoke` (and contextBridge) keep only an error's `message`, so an
 * ApiError crosses a process boundary as one string: `<message> [<CODE>]`, or
 * `<message> [<CODE> <field>]` when a payload field is at fault (the same `... [CODE]` ending as
 * workflow spec issues). `ApiError.fromWire` turns it back into an ApiError.
 */
import { errorMessage, FlowlabError } from '../errors.ts';

/**
 * Stable codes of API failures; tests assert these, UIs print the message.
 * - `BAD_REQUEST`: the payload failed validation (the message names the method and field);
 * - `NOT_FOUND`: no experiment or run with that id;
 * - `UNAVAILABLE`: the lab is not ready (the store is closed, or no host API is present);
 * - `FORBIDDEN`: the call came from a frame that is not Flowlab's own page;
 * - `BUSY`: what the call needs is in use (`startRun`: a model file another running experiment uses);
 * - `RATE_LIMITED`: the caller sent more calls than its limit allows (a workshop attendee; HTTP 429);
 * - `INTERNAL`: anything else (a bug, or a database error); the message says what.
 */
export type ApiErrorCode = 'BAD_REQUEST' | 'NOT_FOUND' | 'UNAVAILABLE' | 'FORBIDDEN' | 'BUSY' | 'RATE_LIMITED' | 'INTERNAL';

const CODES: readonly ApiErrorCode[] = ['BAD_REQUEST', 'NOT_FOUND', 'UNAVAILABLE', 'FORBIDDEN', 'BUSY', 'RATE_LIMITED', 'INTERNAL'];

/**
 * An ApiError as plain data: the form it takes in `flowlab serve`'s JSON answers
 * (`{ok: false, error}`) and on the Electron utility-process relay.
 */
export interface ApiErrorData {
  code: ApiErrorCode;
  message: string;
  method?: string;
  field?: string;
}

/** A failed API call: a stable `code`, the `method` called, the payload `field` at fault if any. */
export class ApiError extends FlowlabError<ApiErrorCode> {
  override readonly name = 'ApiError';
  constructor(
    code: ApiErrorCode,
    message: string,
    /** The API method that failed, when known. */
    readonly method?: string,
    /** The payload field at fault (`BAD_REQUEST`), as a dotted path, e.g. `experimentId`. */
    readonly field?: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, field !== undefined ? { field } : {}, options);
  }

  /** The one-string form that survives IPC: `<message> [<CODE>]`, or `<message> [<CODE> <field>]`. */
  toWire(): string {
    const field = this.field !== undefined && /^[^\s\]]+$/.test(this.field) ? ` ${this.field}` : '';
    return `${this.message} [${this.code}${field}]`;
  }

  /** The plain-data form (see `ApiErrorData`); `method` and `field` only when known. */
  toData(): ApiErrorData {
    const data: ApiErrorData = { code: this.code, message: this.message };
    if (this.method !== undefined) data.method = this.method;
    if (this.field !== undefined) data.field = this.field;
    return data;
  }

  /**
   * Rebuilds an ApiError from its plain-data form. Anything malformed becomes `INTERNAL` with
   * what could be read of it (an unknown code keeps the message).
   */
  static fromData(data: unknown): ApiError {
    const d = (data !== null && typeof data === 'object' ? data : {}) as Record<string, unknown>;
    const code = (CODES as readonly unknown[]).includes(d['code']) ? (d['code'] as ApiErrorCode) : 'INTERNAL';
    const message = typeof d['message'] === 'string' ? d['message'] : `malformed error: ${safeJson(data)}`;
    const method = typeof d['method'] === 'string' ? d['method'] : undefined;
    const field = typeof d['field'] === 'string' ? d['field'] : undefined;
    return new ApiError(code, message, method, field);
  }

  /**
   * Rebuilds an ApiError from a wire string or a rejected invoke's Error. Strips Electron's
   * `Error invoking remote method '<channel>': Error: ` prefix. A message without a code suffix
   * becomes `INTERNAL` with the message kept.
   */
  static fromWire(wire: unknown): ApiError {
    if (wire instanceof ApiError) return wire;
    const raw = errorMessage(wire);
    const text = stripInvokePrefix(raw);
    const m = /^([\s\S]*) \[([A-Z_]+)(?: ([^\s\]]+))?\]$/.exec(text);
    const code = m && (CODES as readonly string[]).includes(m[2]!) ? (m[2] as ApiErrorCode) : undefined;
    const message = code ? m![1]! : text;
    const field = code ? m![3] : undefined;
    const method = /^([A-Za-z]+): /.exec(message)?.[1];
    return new ApiError(code ?? 'INTERNAL', message, method, field, { cause: wire });
  }
}

/** Removes the prefix Electron puts on errors thrown by an `ipcMain.handle` listener. */
export function stripInvokePrefix(message: string): string {
  return message.replace(/^Error invoking remote method '[^']*': (?:[A-Za-z]*Error: )?/, '');
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v)?.slice(0, 200) ?? String(v);
  } catch {
    return String(v);
  }
}
