import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { LogStep, WhoAndWhenLog, WhoAndWhenVariant } from './types.ts';
import { FlowlabError } from '../../errors.ts';

/** A Who&When folder or file that cannot be imported; the message names the file (or folder). */
export type WhoAndWhenErrorCode = 'FOLDER_NOT_FOUND' | 'NO_LOGS' | 'BAD_JSON' | 'BAD_LOG';

export class WhoAndWhenError extends FlowlabError<WhoAndWhenErrorCode> {
  override readonly name = 'WhoAndWhenError';
  constructor(
    code: WhoAndWhenErrorCode,
    message: string,
    /** The file or folder concerned. */
    readonly where: string,
  ) {
    super(code, message, { file: where });
  }
}

/** The speaker name of the task poser in Magentic-One logs; never a candidate for blame. */
export const HUMAN_SPEAKER = 'human';

/**
 * Normalises an agent label so log speakers and `mistake_agent` labels compare:
 * trims, then strips trailing parenthesised qualifiers, repeatedly. Magentic-One's
 * `Orchestrator (thought)`, `Orchestrator (-> WebSurfer)` and `Orchestrator (termination condition)`
 * all become `Orchestrator`, the name the Hand-Crafted labels use. Case is kept; comparisons use
 * `agentKey` (case-insensitive, since upstream fixed case typos in labels by hand).
 * An empty result falls back to the trimmed input.
 */
export function normalizeAgent(raw: string): string {
  let s = raw.trim();
  for (;;) {
    const m = /^(.*\S)\s*\([^()]*\)$/.exec(s);
    if (!m) break;
    s = m[1]!;
  }
  return s || raw.trim();
}

/** The comparison key of an agent label: `normalizeAgent(raw).toLowerCase()`. */
export function agentKey(raw: string): string {
  return normalizeAgent(raw).toLowerCase();
}

/** True when the step's speaker is the task poser (`human`), not an agent of the system. */
export function isHumanStep(step: Pick<LogStep, 'agent'>): boolean {
  return agentKey(step.agent) === HUMAN_SPEAKER;
}

/**
 * Parses one Who&When log from its JSON text (either variant of the benchmark).
 *
 * Shapes (Zhang et al., ICML 2025; `ag2ai/Agents_Failure_Attribution`, folder `Who&When/`):
 * - Hand-Crafted: `{question, ground_truth, history: [{content, role}], is_corrected, mistake_agent,
 *   mistake_step, mistake_reason, question_ID, level?, mistake_type?}`: the speaker is `role`.
 * - Algorithm-Generated: `{question, ground_truth, history: [{content, role, name}], is_correct, level,
 *   mistake_agent, mistake_step, mistake_reason, question_ID, system_prompt}`: the speaker is `name`,
 *   `role` is the chat role. A file is Algorithm-Generated when any history entry has a string `name`;
 *   an entry without one falls back to its `role`.
 *
 * `mistake_step` may be a string or a number; it must be an integer in `0..history.length-1`.
 * `content: null` reads as an empty message.
 * @param id the log id (file base name without `.json`).
 * @param opts.badLabel what a label that cannot be scored does (missing `mistake_agent`, missing
 *   `mistake_step`, or `mistake_step` not an integer in range): `throw` (default) a `BAD_LOG`;
 *   `unscorable`: the log is returned with `unscorable` saying why (the history is still checked).
 * @throws WhoAndWhenError `BAD_JSON` (unparsable) or `BAD_LOG` (not an object, missing or empty
 *   `history`, a bad history entry, and with `badLabel: 'throw'` a bad label as above),
 *   naming `file`.
 */
export function parseWhoAndWhenLog(
  text: string,
  file: string,
  id = path.basename(file).replace(/\.json$/i, ''),
  opts: { badLabel?: 'throw' | 'unscorable' } = {},
): WhoAndWhenLog {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new WhoAndWhenError('BAD_JSON', `${file}: not valid JSON (${(e as Error).message})`, file);
  }
  const bad = (what: string) => new WhoAndWhenError('BAD_LOG', `${file}: ${what}`, file);
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw bad('expected a JSON object');
  const d = doc as Record<string, unknown>;
  if (!('history' in d)) throw bad('missing "history"');
  if (!Array.isArray(d.history)) throw bad('"history" is not an array');
  if (d.history.length === 0) throw bad('"history" is empty');

  const variant: WhoAndWhenVariant = d.history.some((h) => h && typeof h === 'object' && typeof (h as Record<string, unknown>).name === 'string')
    ? 'algorithm-generated'
    : 'hand-crafted';
  const steps: LogStep[] = d.history.map((h, index) => {
    if (!h || typeof h !== 'object' || Array.isArray(h)) throw bad(`history[${index}] is not an object`);
    const e = h as Record<string, unknown>;
    const content = e.content === null || e.content === undefined ? '' : e.content;
    if (typeof content !== 'string') throw bad(`history[${index}].content is not a string`);
    const name = typeof e.name === 'string' && e.name.trim() ? e.name : undefined;
    const role = typeof e.role === 'string' && e.role.trim() ? e.role : undefined;
    const rawAgent = name ?? role;
    if (!rawAgent) throw bad(`history[${index}] names no speaker (${variant === 'hand-crafted' ? '"role"' : '"name" or "role"'})`);
    const step: LogStep = { index, agent: normalizeAgent(rawAgent), rawAgent, content };
    if (name && role) step.chatRole = role;
    return step;
  });

  let unscorable: string | undefined;
  const badLabel = (what: string) => {
    if (opts.badLabel !== 'unscorable') throw bad(what);
    unscorable ??= what;
  };
  const mistakeAgent = typeof d.mistake_agent === 'string' ? d.mistake_agent : '';
  if (!mistakeAgent.trim()) badLabel('missing "mistake_agent"');
  const rawStep = d.mistake_step;
  const stepNum = typeof rawStep === 'string' && rawStep.trim() !== '' ? Number(rawStep) : typeof rawStep === 'number' ? rawStep : NaN;
  if (!('mistake_step' in d)) badLabel('missing "mistake_step"');
  else if (!Number.isInteger(stepNum) || stepNum < 0 || stepNum >= steps.length) {
    badLabel(`"mistake_step" ${JSON.stringify(rawStep)} is not an integer in range 0..${steps.length - 1}`);
  }

  const agents: string[] = [];
  const seen = new Set<string>();
  for (const s of steps) {
    const k = agentKey(s.agent);
    if (!seen.has(k)) {
      seen.add(k);
      agents.push(s.agent);
    }
  }
  const correctness = d.is_correct ?? d.is_corrected;
  const isCorrect = typeof correctness === 'boolean' ? correctness : correctness === 'True' || correctness === 'true' ? true : correctness === 'False' || correctness === 'false' ? false : null;
  const log: WhoAndWhenLog = {
    id,
    file,
    variant,
    question: typeof d.question === 'string' ? d.question : '',
    groundTruth: d.ground_truth === undefined || d.ground_truth === null ? '' : String(d.ground_truth),
    isCorrect,
    steps,
    agents,
    label: {
      agent: mistakeAgent.trim() ? normalizeAgent(mistakeAgent) : '',
      rawAgent: mistakeAgent,
      step: stepNum,
      reason: typeof d.mistake_reason === 'string' ? d.mistake_reason : '',
    },
  };
  if (unscorable !== undefined) log.unscorable = unscorable;
  if (typeof d.question_ID === 'string') log.questionId = d.question_ID;
  if (typeof d.level === 'string' || typeof d.level === 'number') log.level = d.level;
  return log;
}

/** Natural order of file names: `2.json` before `10.json`. */
function naturalCompare(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

/**
 * Imports every `*.json` file of a Who&When folder (either variant; see `parseWhoAndWhenLog`),
 * in natural file-name order (`1.json`, `2.json`, …, `10.json`).
 * @param folder e.g. `<shared>/data/who_and_when/Hand-Crafted`.
 * @param opts.limit keep only the first `limit` files (after sorting); the rest are not read.
 * @param opts.badLabel `throw` (default) or `unscorable`: a file whose label cannot be scored is
 *   returned marked `unscorable` instead of ending the import (see `parseWhoAndWhenLog`).
 * @param opts.badLog `throw` (default) or `unscorable`: a file that is not a log at all (its
 *   `BAD_JSON` / `BAD_LOG`: not valid JSON, not an object, missing or empty `history`, a bad
 *   history entry) is returned as `unreadableLog` (no steps, `unscorable` = the reason) instead of
 *   ending the import.
 * @returns one log per file.
 * @throws WhoAndWhenError `FOLDER_NOT_FOUND` (missing or not a folder), `NO_LOGS` (no `*.json`),
 *   or, unless `badLog: 'unscorable'`, the first bad file's `BAD_JSON` / `BAD_LOG`.
 */
export function importWhoAndWhen(folder: string, opts: { limit?: number; badLabel?: 'throw' | 'unscorable'; badLog?: 'throw' | 'unscorable' } = {}): WhoAndWhenLog[] {
  const dir = path.resolve(folder);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    /* reported below */
  }
  if (!isDir) throw new WhoAndWhenError('FOLDER_NOT_FOUND', `Who&When folder not found: ${dir}`, dir);
  let names = readdirSync(dir).filter((n) => n.toLowerCase().endsWith('.json')).sort(naturalCompare);
  if (names.length === 0) throw new WhoAndWhenError('NO_LOGS', `no *.json logs in ${dir}`, dir);
  if (opts.limit !== undefined) names = names.slice(0, opts.limit);
  return names.map((n) => {
    const file = path.join(dir, n);
    try {
      return parseWhoAndWhenLog(readFileSync(file, 'utf8'), file, undefined, opts.badLabel ? { badLabel: opts.badLabel } : {});
    } catch (e) {
      if (opts.badLog !== 'unscorable' || !(e instanceof WhoAndWhenError)) throw e;
      return unreadableLog(file, e);
    }
  });
}

/**
 * The stand-in of a file that is not a Who&When log: no steps, no label, `unscorable` = the
 * error's message without its leading `<file>: ` (e.g. `"history" is empty`), so every method
 * skips it and reports list it with its file.
 */
export function unreadableLog(file: string, error: WhoAndWhenError): WhoAndWhenLog {
  const reason = error.message.startsWith(`${file}: `) ? error.message.slice(file.length + 2) : error.message;
  return {
    id: path.basename(file).replace(/\.json$/i, ''),
    file,
    variant: 'hand-crafted',
    question: '',
    groundTruth: '',
    isCorrect: null,
    steps: [],
    agents: [],
    label: { agent: '', rawAgent: '', step: Number.NaN, reason: '' },
    unscorable: reason,
  };
}
