import {
  ModelError,
  type CallKey,
  type GenerateRequest,
  type GenerateResult,
  type ModelProvider,
} from '../../core/model/index.ts';
import { isNodeErrorCode, type ModelCallRecord } from '../../core/trace/index.ts';
import { NodeFailure } from '../../core/engine/index.ts';

/**
 * A recorded call with where it sat: the shape of `store.getExperimentCalls(expId)` (extra
 * fields such as `runId` are ignored).
 */
export type RecordedCall = ModelCallRecord & { taskIndex: number; nodeId: string; attempt: number };

/** Options of `ReplayProvider`. */
export interface ReplayOptions {
  /**
   * Maps a recorded task index to the `request.key.taskKey` the engine sends for that task.
   * Default `String(taskIndex)`: the engine's convention (taskKey = the task's index in the
   * experiment's planned task list, in decimal).
   */
  taskKeyOf?: (taskIndex: number) => string;
  /**
   * Compare the request's prompt and system text with the recorded ones and throw
   * `REPLAY_PROMPT_MISMATCH` on a difference. Default true. False serves the recorded completion
   * by key alone (what-if replays after editing a prompt).
   */
  checkPrompts?: boolean;
}

/**
 * A model provider that answers from recorded calls instead of a model: it never loads a model
 * and never imports node-llama-cpp.
 *
 * Lookup: by `request.key` = {taskKey, nodeId, attempt, callIndex}; see `ReplayOptions.taskKeyOf`.
 * Result: the recorded completion, token counts, seed, model, stop reason and (when the request
 * asks for them and they were recorded) token ids; `ms` is the real
 * lookup time (microseconds, not the recorded duration).
 *
 * Errors (`ModelError`):
 * - `REPLAY_MISSING`: no recorded call for the key (the message and `where` name the key);
 * - `REPLAY_PROMPT_MISMATCH`: the request's prompt (or system text) differs from the recording;
 *   the message gives both lengths and the first differing position with context;
 * - recorded failures are replayed, so replays reproduce failures too: a call recorded with an
 *   `error` throws `ABORTED` when it was an abort or timeout (stop reason `abort`, or the error
 *   text starts with `ABORTED`/`TIMEOUT` or mentions abort/timed out/timeout), otherwise
 *   `GENERATION_FAILED`; both carry the recorded message;
 * - `ABORTED` also when `request.signal` is already aborted.
 */
export class ReplayProvider implements ModelProvider {
  readonly name = 'replay';
  private readonly byKey = new Map<string, RecordedCall>();
  private readonly served = new Set<string>();
  private readonly checkPrompts: boolean;

  /** Throws `RangeError` when two recorded calls share one key (e.g. calls of two experiments mixed). */
  constructor(calls: Iterable<RecordedCall>, options: ReplayOptions = {}) {
    const taskKeyOf = options.taskKeyOf ?? String;
    this.checkPrompts = options.checkPrompts ?? true;
    for (const c of calls) {
      const key = { taskKey: taskKeyOf(c.taskIndex), nodeId: c.nodeId, attempt: c.attempt, callIndex: c.callIndex };
      const k = keyString(key);
      if (this.byKey.has(k)) throw new RangeError(`replay: two recorded calls for ${describeKey(key)}`);
      this.byKey.set(k, c);
    }
  }

  /** Number of recorded calls available. */
  get size(): number {
    return this.byKey.size;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const started = performance.now();
    const where = describeKey(request.key);
    if (request.signal?.aborted) throw new ModelError('ABORTED', `replay: call for ${where} aborted before it started`, where);
    const k = keyString(request.key);
    const rec = this.byKey.get(k);
    if (!rec) throw new ModelError('REPLAY_MISSING', `replay: no recorded call for ${where}`, where);
    if (this.checkPrompts) {
      const hint = mismatch('prompt', rec.prompt, request.prompt) ?? mismatch('system', rec.system ?? '', request.system ?? '');
      if (hint) throw new ModelError('REPLAY_PROMPT_MISMATCH', `replay: ${where}: ${hint}`, where);
    }
    this.served.add(k);
    if (rec.error !== undefined) throw replayedFailure(rec, where);
    const result: GenerateResult = {
      text: rec.completion,
      tokens: { prompt: rec.promptTokens, completion: rec.completionTokens },
      ms: performance.now() - started,
      seed: rec.seed,
      model: rec.model,
    };
    const stop = stopReasonOf(rec.stopReason);
    if (stop) result.stopReason = stop;
    // Token ids are served when asked for and recorded (a replayed SFT export reads them).
    if (request.recordTokens && rec.promptTokenIds) result.promptTokenIds = rec.promptTokenIds;
    if (request.recordTokens && rec.completionTokenIds) result.completionTokenIds = rec.completionTokenIds;
    // What the recorded call ran with, so a replayed trace stores the same call.
    if (rec.renderedPrompt !== undefined) result.renderedPrompt = rec.renderedPrompt;
    if (rec.thinking !== undefined) result.thinking = rec.thinking;
    if (rec.applied !== undefined) result.applied = rec.applied;
    if (rec.promptTokensEvaluated !== undefined) result.promptTokensEvaluated = rec.promptTokensEvaluated;
    return result;
  }

  /** Keys of recorded calls no `generate` has asked for yet (a replay that took another path leaves some). */
  unusedCalls(): CallKey[] {
    const out: CallKey[] = [];
    for (const k of this.byKey.keys()) if (!this.served.has(k)) out.push(parseKey(k));
    return out;
  }

  /** Always 0: replay loads no model. */
  modelsLoaded(): number {
    return 0;
  }

  async dispose(): Promise<void> {}
}

const SEP = '\u0000';

function keyString(k: CallKey): string {
  return [k.taskKey, k.nodeId, k.attempt, k.callIndex].join(SEP);
}

function parseKey(s: string): CallKey {
  const [taskKey = '', nodeId = '', attempt = '0', callIndex = '0'] = s.split(SEP);
  return { taskKey, nodeId, attempt: Number(attempt), callIndex: Number(callIndex) };
}

function describeKey(k: CallKey): string {
  return `task ${k.taskKey} node ${k.nodeId} attempt ${k.attempt} call ${k.callIndex}`;
}

/** undefined when equal; otherwise a one-line hint: lengths and the first difference in context. */
function mismatch(what: string, recorded: string, requested: string): string | undefined {
  if (recorded === requested) return undefined;
  let i = 0;
  while (i < recorded.length && i < requested.length && recorded[i] === requested[i]) i++;
  const from = Math.max(0, i - 20);
  const snip = (s: string) => JSON.stringify((from > 0 ? '…' : '') + s.slice(from, i + 40) + (s.length > i + 40 ? '…' : ''));
  return (
    `${what} differs from the recording at character ${i} ` +
    `(recorded ${recorded.length} chars, requested ${requested.length}): recorded ${snip(recorded)} vs requested ${snip(requested)}`
  );
}

/**
 * The failure a recorded errored call reproduces. The engine records `error` as `<CODE>: <message>`;
 * a recorded node timeout or agent error comes back as the same execution fault (so the replayed
 * node fails exactly as the recorded one did); an abort as `ABORTED`; anything else as an
 * infrastructure fault with the recorded code (`GENERATION_FAILED` when none can be read, or the
 * code is not a node error code: core/trace/codes.ts).
 */
function replayedFailure(rec: RecordedCall, where: string): Error {
  const m = /^([A-Z][A-Z_]+): ([\s\S]*)$/.exec(rec.error ?? '');
  const code = m?.[1];
  const message = m?.[2] ?? rec.error ?? '';
  if (code === 'TIMEOUT' || code === 'AGENT_ERROR') return new NodeFailure('execution', code, message);
  if (code === 'CANCELLED' || (!code && isAbortLike(rec))) return new ModelError('ABORTED', `replay of a recorded failure (${where}): ${rec.error}`, where);
  if (code && isNodeErrorCode(code)) return new NodeFailure('infrastructure', code, message);
  return new ModelError('GENERATION_FAILED', `replay of a recorded failure (${where}): ${rec.error}`, where);
}

function isAbortLike(rec: RecordedCall): boolean {
  if (rec.stopReason === 'abort') return true;
  const e = rec.error ?? '';
  return /^(ABORTED|TIMEOUT)\b/.test(e) || /\babort(ed)?\b|\btim(ed|e)[ -]?out\b/i.test(e);
}

function stopReasonOf(s: string | undefined): GenerateResult['stopReason'] {
  switch (s) {
    case undefined:
      return undefined;
    case 'eos':
    case 'maxTokens':
    case 'stop':
    case 'abort':
    case 'other':
      return s;
    default:
      return 'other';
  }
}
