/**
 * The "surfaced" attribution method: mark the messages of a Who&When log that surface an execution
 * failure (named, conservative rules), then run Flowlab's structure-aware credit (`computeCredit`)
 * over the log as a sequential trace. Scored on the Who&When labels (Zhang et al., ICML 2025).
 */
import { computeCredit, type CreditEvent, type CreditGraph, type CreditResult } from '../credit/index.ts';
import { asNodeId, asRoleName, HUMAN, type NodeId } from '../../ids.ts';
import { impossibleInstruction, teamAuthorship, type AuthorshipOptions, type StepAuthorship } from './authorship.ts';
import { agentKey, HUMAN_SPEAKER, isHumanStep } from './whoAndWhen.ts';
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
  /**
   * `execution`: the author's fault (the speaking agent; with team authorship a terminal run's
   * code writer); `infrastructure`: the harness crashed (blamed on nobody); `wiring` (team
   * authorship only): the message was told to do the impossible, its wirer's fault.
   */
  failureClass: 'execution' | 'infrastructure' | 'wiring';
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

/** The rule id of a terminal run that found no code to execute (team authorship; wiring, the caller's). */
export const NO_CODE_RULE = 'terminal-no-code';
/** The rule id of a failure caused by an instruction naming a missing file, tool or agent (team authorship; wiring). */
export const IMPOSSIBLE_INSTRUCTION_RULE = 'impossible-instruction';

/** Options of the surfaced method. */
export interface SurfacingOptions extends AuthorshipOptions {
  /**
   * The class of a harness crash (`HARNESS_CRASH_RULE`). `infrastructure` (the default of these
   * functions): the harness's fault, blamed on nobody (FloWright: infrastructure faults are
   * excluded from blame; docs/credit.md), so never predicted. `execution`: blamed on the agent
   * whose message was being delivered (its content may have tripped the model API's content
   * filter). Every evaluation entry point (`evaluateAttribution`, `structural`, `hybrid`, the
   * narrowed judge, `flowlab attribution-eval`) defaults to `execution` (`DEFAULT_HARNESS_CRASH`):
   * on the Hand-Crafted logs 26 end in a crash block and the label names its speaker in 20.
   */
  harnessCrash?: 'infrastructure' | 'execution';
  /**
   * Who authored each message (see `logTrace`). `speaker` (default): every message is its
   * speaker's. `team`: the authorship of core/blame/attribution/authorship.ts — a terminal run is
   * authored by the message whose code it ran and wired by its caller, an orchestrator's
   * instruction wires the message that answers it.
   */
  authorship?: 'speaker' | 'team';
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
  /** Team authorship per step (only with `authorship: 'team'`). */
  authorship?: StepAuthorship[];
}

/**
 * Turns a log into a trace `computeCredit` reads.
 *
 * - One node per history message, id `step-<i>`; sequential dependencies `step-(i-1) -> step-i`
 *   (each message is produced with the conversation so far as its input).
 * - Authorship (`opts.authorship: 'speaker'`, the default): `runBy` = the speaking agent
 *   (normalised name); `wiredBy` = [`human`]: the multi-agent systems of Who&When (Magentic-One,
 *   AG2 teams) were designed by people. Only execution and infrastructure faults are surfaced, so
 *   blame goes to `runBy` (execution) or nobody (infrastructure); `wiredBy` never receives blame.
 * - Each message is one attempt: `failed` (class and code from `surfaceFailure`, given the earlier
 *   `human` messages as quoted task text) or `ok`.
 *
 * With `opts.authorship: 'team'` (see `teamAuthorship`), instead:
 * - a message answering an orchestrator's instruction is wired by the instruction's speaker
 *   (`wiredBy`), with an edge from the instruction;
 * - a terminal run is run by no role: it executes what its author wrote (`argumentFrom` = the
 *   message whose code it ran, else its caller's message, with an edge from it), and is wired by
 *   its caller. Its execution failure is the author's (computeCredit), at the author's step;
 * - a terminal run that found no code is a `wiring` failure (`NO_CODE`): the caller asked for a
 *   run and gave nothing to run;
 * - an execution failure naming a missing file, tool or agent that the message's instruction
 *   named (`impossibleInstruction`) is a `wiring` failure of the instruction's speaker
 *   (`MISSING_FILE`, `UNKNOWN_TOOL`, `UNKNOWN_AGENT`): it was told to do the impossible.
 */
export function logTrace(log: WhoAndWhenLog, opts: SurfacingOptions = {}): LogTrace {
  const graph: CreditGraph = { nodes: [], edges: [] };
  const events: CreditEvent[] = [];
  const failures: SurfacedFailure[] = [];
  const quoted: string[] = [];
  const team = opts.authorship === 'team' ? teamAuthorship(log, opts) : undefined;
  for (const step of log.steps) {
    const id = stepNodeId(step.index);
    const a = team?.[step.index];
    let f = surfaceFailure(step, { ...opts, quoted });
    if (!a) {
      graph.nodes.push({ id, wiredBy: [HUMAN], runBy: asRoleName(step.agent) });
      if (step.index > 0) graph.edges.push({ from: stepNodeId(step.index - 1), to: id });
    } else {
      const node: CreditGraph['nodes'][number] = { id, wiredBy: [a.wirer ? asRoleName(a.wirer) : HUMAN] };
      if (a.terminal && a.authorStep !== step.index) node.argumentFrom = stepNodeId(a.authorStep);
      else node.runBy = asRoleName(step.agent);
      graph.nodes.push(node);
      const from = new Set<number>();
      if (step.index > 0) from.add(step.index - 1);
      if (a.wiredAt !== null) from.add(a.wiredAt);
      if (a.terminal && a.authorStep !== step.index) from.add(a.authorStep);
      for (const k of [...from].sort((x, y) => x - y)) graph.edges.push({ from: stepNodeId(k), to: id });
      f = teamFailure(step, a, log.steps, f);
    }
    if (isHumanStep(step) && step.content.trim()) quoted.push(step.content.trim());
    if (f) {
      failures.push(f);
      events.push({ nodeId: id, attempt: 1, status: 'failed', failureClass: f.failureClass, errorCode: f.errorCode });
    } else {
      events.push({ nodeId: id, attempt: 1, status: 'ok' });
    }
  }
  const trace: LogTrace = { graph, events, failures };
  if (team) trace.authorship = team;
  return trace;
}

/** The failure of one message under team authorship (see `logTrace`), from its speaker-view failure `f`. */
function teamFailure(step: LogStep, a: StepAuthorship, steps: readonly LogStep[], f: SurfacedFailure | null): SurfacedFailure | null {
  if (a.terminal && a.noCode) {
    const m = /[^\n]*\bno code blocks?[^\n]*/i.exec(step.content);
    return { step: step.index, rule: NO_CODE_RULE, errorCode: 'NO_CODE', failureClass: 'wiring', evidence: (m?.[0] ?? step.content).trim().slice(0, 160) };
  }
  if (f && f.failureClass === 'execution' && a.wiredAt !== null) {
    const told = impossibleInstruction(steps[a.wiredAt]!.content, step.content);
    if (told) return { step: step.index, rule: IMPOSSIBLE_INSTRUCTION_RULE, errorCode: told.errorCode, failureClass: 'wiring', evidence: `${told.kind} ${told.name} (named by step ${a.wiredAt}): ${f.evidence}`.slice(0, 160) };
  }
  return f;
}

/** The surfaced method's result for one log. */
export interface SurfacedAttribution {
  /** The root failure with the earliest decisive step blamed on an agent; null when none (the log is not covered). */
  prediction: Prediction | null;
  /** The surfaced failure the prediction comes from (at the message that surfaced it, maybe after the decisive step). */
  failure?: SurfacedFailure;
  trace: LogTrace;
  credit: CreditResult;
}

/**
 * The "surfaced" attribution method: structure-aware credit (FloWright; `computeCredit`) over the
 * failures a log surfaces itself. No model, no labels.
 *
 * Prediction = the root failure blamed on an agent (`blamed` set, never the human) with the
 * smallest decisive step: agent = the role blamed, step = the decisive step. With speaker
 * authorship the decisive step is the failed message itself (an execution fault, its `runBy`).
 * With team authorship it is the author's message for an execution fault blamed through
 * `authorNode` (the message whose code a terminal ran), and the wiring message (the instruction,
 * the terminal's caller) for a wiring fault. Ties go to the earlier surfacing message.
 * Infrastructure roots (harness crashes unless `harnessCrash: 'execution'`) are blamed on nobody
 * and so never predicted. Cascades (a failed message right after a failed one) are never
 * predicted. No such root -> no prediction.
 */
export function attributeSurfaced(log: WhoAndWhenLog, opts: SurfacingOptions = {}): SurfacedAttribution {
  const trace = logTrace(log, opts);
  const credit = computeCredit(trace.graph, trace.events);
  const stepOf = (id: string) => Number(id.slice('step-'.length));
  let best: { step: number; agent: string; at: number } | null = null;
  for (const r of credit.roots) {
    if (r.blamed === null || agentKey(r.blamed) === HUMAN_SPEAKER) continue;
    const at = stepOf(r.nodeId);
    const a = trace.authorship?.[at];
    const step = r.authorNode !== undefined ? stepOf(r.authorNode) : r.failureClass === 'wiring' && a?.wiredAt != null ? a.wiredAt : at;
    if (!best || step < best.step || (step === best.step && at < best.at)) best = { step, agent: r.blamed, at };
  }
  const out: SurfacedAttribution = { prediction: best && { agent: best.agent, step: best.step }, trace, credit };
  if (best) out.failure = trace.failures.find((f) => f.step === best.at);
  return out;
}

/** `attributeSurfaced` as a scored record. */
export function surfacedRecord(log: WhoAndWhenLog, opts: SurfacingOptions = {}): AttributionRecord {
  const a = attributeSurfaced(log, opts);
  const rec: AttributionRecord = { logId: log.id, label: { agent: log.label.agent, step: log.label.step, rawAgent: log.label.rawAgent }, prediction: a.prediction, calls: 0 };
  if (a.failure) {
    rec.note = `${a.failure.rule}: ${a.failure.evidence.replace(/\s+/g, ' ').slice(0, 80)}`;
    if (a.prediction && a.prediction.step !== a.failure.step) rec.note += ` (surfaced at step ${a.failure.step})`;
  }
  else if (a.trace.failures.length) rec.note = `only ${a.trace.failures.map((f) => f.rule).join(', ')} (not blamed on an agent)`;
  else rec.note = 'no surfaced failure';
  return rec;
}
