/**
 * The "surfaced" attribution method: mark the messages of a Who&When log that surface an execution
 * failure (named, conservative rules), then run Flowlab's structure-aware credit (`computeCredit`)
 * over the log as a sequential trace. Scored on the Who&When labels (Zhang et al., ICML 2025).
 */
import { computeCredit, type CreditEvent, type CreditGraph, type CreditResult } from '../credit/index.ts';
import { asNodeId, asRoleName, HUMAN, type NodeId } from '../ids.ts';
import { isHumanStep } from './whoAndWhen.ts';
import type { AttributionRecord, LogStep, Prediction, WhoAndWhenLog } from './types.ts';

/**
 * A named pattern by which a message *surfaces* an execution failure (it says, in so many words,
 * that something failed). Conservative on purpose: a message that only talks about an earlier
 * failure, or a step that silently does the wrong thing, is not matched.
 */
export interface SurfacingRule {
  /** Stable id, e.g. `nonzero-exit-code`. */
  id: string;
  /** The `errorCode` put on the failed node. */
  errorCode: string;
  description: string;
  /** The matched text, or null. */
  match(content: string): string | null;
}

/** One message's surfaced failure. */
export interface SurfacedFailure {
  step: number;
  rule: string;
  errorCode: string;
  /** `execution`: the speaking agent's fault; `infrastructure`: the harness crashed (blamed on nobody). */
  failureClass: 'execution' | 'infrastructure';
  /** The text that matched (at most 160 characters). */
  evidence: string;
}

const EXIT_CODE = /\b(?:exit\s*code|exitcode|exit\s*status|return\s*code|returncode)\b\s*(?:was|is|of|=)?\s*:?\s*(-?\d+)/gi;

/** Every exit code the message reports (`exit code: 1`, `exitcode: 0 (execution succeeded)`, `The Unix exit code was: 0`). */
function exitCodes(content: string): number[] {
  return [...content.matchAll(EXIT_CODE)].map((m) => Number(m[1]));
}

const regexRule = (id: string, errorCode: string, description: string, ...patterns: RegExp[]): SurfacingRule => ({
  id,
  errorCode,
  description,
  match(content) {
    for (const p of patterns) {
      p.lastIndex = 0;
      const m = p.exec(content);
      if (m) return m[0];
    }
    return null;
  },
});

/**
 * The execution-failure rules, tried in this order on a message (the first match names the failure).
 * Lines are matched from their start (`^` in multiline mode), so a coordinator's JSON ledger line
 * (`"reason": "the download failed"`) or prose about an earlier error does not match.
 */
export const SURFACING_RULES: readonly SurfacingRule[] = [
  {
    id: 'nonzero-exit-code',
    errorCode: 'NONZERO_EXIT',
    description: 'reports a non-zero exit code of code it ran (`exitcode: 1 (execution failed)`, `exited with Unix exit code: 2`)',
    match(content) {
      for (const m of content.matchAll(EXIT_CODE)) if (Number(m[1]) !== 0) return m[0];
      return null;
    },
  },
  regexRule(
    'python-traceback',
    'PYTHON_TRACEBACK',
    'a line starting `Traceback (most recent call last):`',
    /^[ \t>]*Traceback \(most recent call last\):/m,
  ),
  regexRule(
    'error-line',
    'ERROR_LINE',
    'a line that starts with an error label: `Error:` / `Error.` / `ERROR:` / `Exception:` or a Python exception name (`ValueError: …`, `requests.exceptions.HTTPError: …`)',
    /^[ \t]*(?:[A-Za-z_][\w.]*(?:Error|Exception)|Error|ERROR|Exception)(?::|\.(?=\s))[ \t]*\S[^\n]*/m,
  ),
  regexRule(
    'http-error-status',
    'HTTP_ERROR',
    'an HTTP 4xx/5xx status: `Error 404`, `HTTP Error 403`, `HTTP/1.1 500`, `status code: 503`, `404 Client Error`, `404 Not Found`, `403 Forbidden`, …',
    /\b(?:HTTP(?:\/\d(?:\.\d)?)?|HTTP\s+Error|status(?:\s*code)?|Error(?:\s*code)?)\s*:?\s*[45]\d\d\b/i,
    /\b[45]\d\d\s+(?:Client|Server)\s+Error\b/i,
    /\b(?:400 Bad Request|401 Unauthorized|403 Forbidden|404 (?:Page )?Not Found|405 Method Not Allowed|408 Request Timeout|429 Too Many Requests|500 Internal Server Error|502 Bad Gateway|503 Service Unavailable|504 Gateway Time-?out)\b/i,
  ),
  regexRule(
    'browser-error-page',
    'BROWSER_ERROR_PAGE',
    'the browser shows its own error page: a `chrome-error://` address or a `net::ERR_…` code',
    /\bchrome-error:\/\/\S*/,
    /\bnet::ERR_[A-Z_]+/,
  ),
  regexRule(
    'tool-error-report',
    'TOOL_ERROR_REPORT',
    'a line that opens (after at most four words of subject) with `encountered an error`, `execution failed`, `failed to <run|load|open|…>` or `timed out`',
    /^[ \t]*(?:[A-Za-z][\w-]*[ \t]+){0,4}(?:encountered an error|execution failed|failed to (?:execute|run|load|open|download|fetch|connect|parse|decode|read|write|navigate)|timed out)\b[^\n]*/im,
  ),
  regexRule(
    'refusal',
    'REFUSAL',
    'the message opens with an apology that declines within its first sentence: `I\'m sorry, but I can\'t …`, `I apologize, I am unable to …`',
    /^\s*(?:I['’]m sorry|I am sorry|I apologi[sz]e|Sorry)\b[^.!?\n]{0,120}?\b(?:can(?:not|['’]t)|unable to|not able to|won['’]t be able to)\b/i,
  ),
];

/**
 * Where the Magentic-One runtime (autogen_core) crashed while delivering a message: it appends
 * `Error processing publish message` and a Python traceback (seen with a content-filter
 * `openai.BadRequestError` or a dropped connection) to the message being published. That is the
 * harness's fault, not the speaking agent's.
 */
const HARNESS_CRASH = /Error processing publish message\s*\n\s*Traceback \(most recent call last\):/;

/** Quoted task texts shorter than this are not removed (see `surfaceFailure`). */
const MIN_QUOTED = 40;

/** The rule id of a harness crash (failure class `infrastructure` unless asked otherwise). */
export const HARNESS_CRASH_RULE = 'harness-crash';

/** Options of the surfaced method. */
export interface SurfacingOptions {
  /**
   * The class of a harness crash (`HARNESS_CRASH_RULE`). `infrastructure` (default): the harness's
   * fault, blamed on nobody (FloWright: infrastructure faults are excluded from blame; docs/credit.md), so never predicted. `execution`: blamed on the agent whose
   * message was being delivered (its content may have tripped the model API's content filter),
   * a sensitivity variant.
   */
  harnessCrash?: 'infrastructure' | 'execution';
}

/**
 * Decides whether one message surfaces a failure.
 *
 * 1. The task poser (`human`) never fails.
 * 2. Text the message copies verbatim from `quoted` (the task statements of earlier `human`
 *    messages, which coordinators repeat, e.g. "Here are the file's contents: … Error. Could not
 *    transcribe this audio.") is removed first: it reports what happened before the log. Quoted
 *    texts shorter than 40 characters are ignored (too likely to occur by chance).
 * 3. A harness crash block (see `HARNESS_CRASH_RULE`) is cut off; the rest is the message body.
 * 4. A body that reports exit codes, all of them 0, surfaces no execution failure: the code ran,
 *    and any traceback or error text in it is the program's output (e.g. a printed issue report).
 * 5. Otherwise the first of `SURFACING_RULES` (in order) that matches the body -> `execution`
 *    failure of the speaking agent; else a crash block alone -> `infrastructure` (blamed on nobody;
 *    `opts.harnessCrash: 'execution'` blames the speaking agent instead); else null.
 */
export function surfaceFailure(step: Pick<LogStep, 'index' | 'agent' | 'content'>, opts: SurfacingOptions & { quoted?: readonly string[] } = {}): SurfacedFailure | null {
  if (isHumanStep(step)) return null;
  let content = step.content;
  for (const q of opts.quoted ?? []) if (q.length >= MIN_QUOTED && content.includes(q)) content = content.split(q).join('\n');
  const crash = HARNESS_CRASH.exec(content);
  const body = crash ? content.slice(0, crash.index) : content;
  const codes = exitCodes(body);
  const ranCleanly = codes.length > 0 && codes.every((c) => c === 0);
  if (!ranCleanly) {
    for (const rule of SURFACING_RULES) {
      const m = rule.match(body);
      if (m !== null) return { step: step.index, rule: rule.id, errorCode: rule.errorCode, failureClass: 'execution', evidence: m.slice(0, 160) };
    }
  }
  if (crash) return { step: step.index, rule: HARNESS_CRASH_RULE, errorCode: 'HARNESS_CRASH', failureClass: opts.harnessCrash ?? 'infrastructure', evidence: crash[0].slice(0, 160) };
  return null;
}

/** The node id of history message `i`. */
export const stepNodeId = (i: number): NodeId => asNodeId(`step-${i}`);

/** A log as a credit trace: the graph, one event per message, and the failures surfaced. */
export interface LogTrace {
  graph: CreditGraph;
  events: CreditEvent[];
  failures: SurfacedFailure[];
}

/**
 * Turns a log into a trace `computeCredit` reads.
 *
 * - One node per history message, id `step-<i>`; sequential dependencies `step-(i-1) -> step-i`
 *   (each message is produced with the conversation so far as its input).
 * - Authorship: `runBy` = the speaking agent (normalised name); `wiredBy` = [`human`]: the
 *   multi-agent systems of Who&When (Magentic-One, AG2 teams) were designed by people, and no
 *   role wired a message in. Only execution and infrastructure faults are surfaced, so blame goes
 *   to `runBy` (execution) or nobody (infrastructure); `wiredBy` never receives blame here.
 * - Each message is one attempt: `failed` (class and code from `surfaceFailure`, given the earlier
 *   `human` messages as quoted task text) or `ok`.
 */
export function logTrace(log: WhoAndWhenLog, opts: SurfacingOptions = {}): LogTrace {
  const graph: CreditGraph = { nodes: [], edges: [] };
  const events: CreditEvent[] = [];
  const failures: SurfacedFailure[] = [];
  const quoted: string[] = [];
  for (const step of log.steps) {
    const id = stepNodeId(step.index);
    graph.nodes.push({ id, wiredBy: [HUMAN], runBy: asRoleName(step.agent) });
    if (step.index > 0) graph.edges.push({ from: stepNodeId(step.index - 1), to: id });
    const f = surfaceFailure(step, { ...opts, quoted });
    if (isHumanStep(step) && step.content.trim()) quoted.push(step.content.trim());
    if (f) {
      failures.push(f);
      events.push({ nodeId: id, attempt: 1, status: 'failed', failureClass: f.failureClass, errorCode: f.errorCode });
    } else {
      events.push({ nodeId: id, attempt: 1, status: 'ok' });
    }
  }
  return { graph, events, failures };
}

/** The surfaced method's result for one log. */
export interface SurfacedAttribution {
  /** The earliest root failure blamed on an agent; null when none (the log is not covered). */
  prediction: Prediction | null;
  /** The surfaced failure the prediction comes from. */
  failure?: SurfacedFailure;
  trace: LogTrace;
  credit: CreditResult;
}

/**
 * The "surfaced" attribution method: structure-aware credit (FloWright; `computeCredit`) over the
 * failures a log surfaces itself. No model, no labels.
 *
 * Prediction = the root failure with the smallest step index that is blamed on an agent
 * (`blamed` set: an execution fault): agent = its `runBy`, step = its index. Infrastructure roots
 * (harness crashes) are blamed on nobody and so never predicted. Cascades (a failed message right
 * after a failed one) are never predicted. No such root -> no prediction.
 */
export function attributeSurfaced(log: WhoAndWhenLog, opts: SurfacingOptions = {}): SurfacedAttribution {
  const trace = logTrace(log, opts);
  const credit = computeCredit(trace.graph, trace.events);
  let best: { step: number; agent: string } | null = null;
  for (const r of credit.roots) {
    if (r.blamed === null) continue;
    const step = Number(r.nodeId.slice('step-'.length));
    if (!best || step < best.step) best = { step, agent: r.blamed };
  }
  const out: SurfacedAttribution = { prediction: best, trace, credit };
  if (best) out.failure = trace.failures.find((f) => f.step === best.step);
  return out;
}

/** `attributeSurfaced` as a scored record. */
export function surfacedRecord(log: WhoAndWhenLog, opts: SurfacingOptions = {}): AttributionRecord {
  const a = attributeSurfaced(log, opts);
  const rec: AttributionRecord = { logId: log.id, label: { agent: log.label.agent, step: log.label.step }, prediction: a.prediction, calls: 0 };
  if (a.failure) rec.note = `${a.failure.rule}: ${a.failure.evidence.replace(/\s+/g, ' ').slice(0, 80)}`;
  else if (a.trace.failures.length) rec.note = `only ${a.trace.failures.map((f) => f.rule).join(', ')} (not blamed on an agent)`;
  else rec.note = 'no surfaced failure';
  return rec;
}
