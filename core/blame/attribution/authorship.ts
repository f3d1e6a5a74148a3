/**
 * Who authored each message of a Who&When log, the way the teams actually work (Magentic-One:
 * Fourney et al., "Magentic-One: A Generalist Multi-Agent System for Solving Complex Tasks",
 * arXiv 2411.04468, §3; AG2 group chats with a code-executing terminal):
 *
 * - an orchestrator's instruction `Orchestrator (-> X)` wires X's next message: what X is told
 *   to do is the orchestrator's design, what X does with it is X's;
 * - a terminal executes code it did not write: the message that wrote the code is the author of
 *   the run (its execution failure is that author's, at that author's step), and the message
 *   that called the terminal wired it (a run with no code to execute is the caller's fault).
 *
 * Plain data from the log text alone; no model, no labels.
 */
import { agentKey, isHumanStep, normalizeAgent } from './whoAndWhen.ts';
import type { LogStep, WhoAndWhenLog } from './types.ts';

/** Options of `teamAuthorship`. */
export interface AuthorshipOptions {
  /**
   * Whether a speaker (normalised name) is a terminal that executes code others wrote.
   * Default: the name contains `terminal`, any case (Magentic-One's `ComputerTerminal`, AG2's
   * `Computer_terminal`).
   */
  isTerminal?: (agent: string) => boolean;
}

/** How one message was authored (see `teamAuthorship`). */
export interface StepAuthorship {
  index: number;
  /** True for a terminal's message (a code run). */
  terminal: boolean;
  /**
   * Who answers for an execution fault surfaced here: the speaker; for a terminal run, the writer
   * of the code it ran (else its caller, whose message was run as is; else the terminal itself).
   */
  author: string;
  /** The step of the author's message: the decisive step of an execution fault here. */
  authorStep: number;
  /** Terminal runs: the step whose code block ran; null when no earlier message had one. */
  codeStep: number | null;
  /**
   * The message that wired this one in: the orchestrator's instruction it answers
   * (`Orchestrator (-> X)`, the latest instruction before it, addressed to its speaker); for a
   * terminal run, the message that called it (that instruction, else the previous agent message).
   * null: nobody in the log wired it (the team's own design, made by people).
   */
  wiredAt: number | null;
  /** The wiring message's speaker (normalised); null with `wiredAt`. */
  wirer: string | null;
  /** A terminal run that reports it found no code to execute. */
  noCode: boolean;
}

const ADDRESSEE = /\(\s*->\s*([^()]*?)\s*\)\s*$/;

/** The agent a Magentic-One instruction is addressed to (`Orchestrator (-> WebSurfer)` -> `WebSurfer`), else null. */
export function addresseeOf(rawAgent: string): string | null {
  const m = ADDRESSEE.exec(rawAgent.trim());
  return m && m[1] ? normalizeAgent(m[1]) : null;
}

/** The default terminal test: the normalised name contains `terminal` (any case). */
export const isTerminalAgent = (agent: string): boolean => agentKey(agent).includes('terminal');

/** A fenced markdown code block (```…```), the form terminals execute. */
const CODE_BLOCK = /```[^\n`]*\n[\s\S]*?```/;

/** A terminal's report that it found nothing to run (Magentic-One: "No code block detected in the messages"; AG2: "No code blocks found in the thread"). */
const NO_CODE = /\bno code blocks?\s+(?:were\s+|was\s+)?(?:detected|found)\b/i;

/** True when a message holds a fenced code block. */
export const hasCodeBlock = (content: string): boolean => CODE_BLOCK.test(content);

/** True when a terminal's message reports that it found no code to execute. */
export const reportsNoCode = (content: string): boolean => NO_CODE.test(content);

/**
 * Team authorship of every message of a log, in order (one entry per step).
 *
 * - Instructions: a message whose raw speaker ends in `(-> X)` is an instruction to X. A
 *   message by X wired by it is one whose latest earlier instruction is addressed to X.
 * - Terminal runs (`opts.isTerminal`): the caller is the latest instruction when it is addressed
 *   to the terminal, else the nearest earlier message of an agent (not the human, not a terminal).
 *   The code is the nearest earlier message with a fenced code block, looking back no further than
 *   the previous terminal run (code already run is not run again) and skipping the human's. The
 *   author is that message's speaker; with no code block, the caller's (its message was run as is);
 *   with no caller either, the terminal itself.
 * O(steps²) in the worst case (backward scans), linear on Magentic-One's alternating logs.
 */
export function teamAuthorship(log: Pick<WhoAndWhenLog, 'steps'>, opts: AuthorshipOptions = {}): StepAuthorship[] {
  const isTerminal = opts.isTerminal ?? isTerminalAgent;
  const out: StepAuthorship[] = [];
  let lastInstruction: { step: number; to: string; from: string } | null = null;
  let lastTerminal = -1;
  for (const step of log.steps) {
    const terminal = !isHumanStep(step) && isTerminal(step.agent);
    const a: StepAuthorship = { index: step.index, terminal, author: step.agent, authorStep: step.index, codeStep: null, wiredAt: null, wirer: null, noCode: false };
    if (!isHumanStep(step)) {
      const addressed = lastInstruction && agentKey(lastInstruction.to) === agentKey(step.agent) ? lastInstruction : null;
      if (addressed) {
        a.wiredAt = addressed.step;
        a.wirer = addressed.from;
      }
      if (terminal) {
        if (!addressed) {
          const caller = previousAgentStep(log.steps, step.index, isTerminal);
          if (caller) {
            a.wiredAt = caller.index;
            a.wirer = caller.agent;
          }
        }
        for (let s = step.index - 1; s > lastTerminal; s--) {
          const prev = log.steps[s]!;
          if (!isHumanStep(prev) && !isTerminal(prev.agent) && hasCodeBlock(prev.content)) {
            a.codeStep = s;
            break;
          }
        }
        a.noCode = reportsNoCode(step.content);
        const authorStep = a.codeStep ?? a.wiredAt;
        if (authorStep !== null) {
          a.authorStep = authorStep;
          a.author = log.steps[authorStep]!.agent;
        }
        lastTerminal = step.index;
      }
    }
    out.push(a);
    const to = addresseeOf(step.rawAgent);
    if (to !== null && !isHumanStep(step)) lastInstruction = { step: step.index, to, from: step.agent };
  }
  return out;
}

function previousAgentStep(steps: readonly LogStep[], before: number, isTerminal: (agent: string) => boolean): LogStep | null {
  for (let s = before - 1; s >= 0; s--) {
    const p = steps[s]!;
    if (!isHumanStep(p) && !isTerminal(p.agent)) return p;
  }
  return null;
}

/** What an instruction told an agent to use that did not exist (see `impossibleInstruction`). */
export interface ImpossibleInstruction {
  kind: 'file' | 'tool' | 'agent';
  /** The missing thing, as the failure names it. */
  name: string;
  /** `MISSING_FILE`, `UNKNOWN_TOOL` or `UNKNOWN_AGENT`: the wiring fault's code. */
  errorCode: 'MISSING_FILE' | 'UNKNOWN_TOOL' | 'UNKNOWN_AGENT';
}

const MISSING: ReadonlyArray<{ kind: ImpossibleInstruction['kind']; patterns: RegExp[] }> = [
  {
    kind: 'file',
    patterns: [
      /\bFile not found:\s*([^\s'"]+)/i, // Magentic-One's FileSurfer
      /\bNo such file or directory:\s*['"]([^'"]+)['"]/i, // Python: [Errno 2] No such file or directory: 'x.csv'
      /([^\s:'"]+):\s*No such file or directory/, // shell: cat: x.csv: No such file or directory
      /\bcannot (?:find or open|find|open)\s+['"]?([^\s'",]+)/i, // unzip: cannot find or open x.zip
    ],
  },
  {
    kind: 'tool',
    patterns: [
      /\bunknown (?:tool|function)[:\s]+['"`]?([\w.-]+)/i,
      /\bno (?:tool|function) (?:named|called)\s+['"`]?([\w.-]+)/i,
      /\b(?:tool|function)\s+['"`]([\w.-]+)['"`]\s+(?:is not available|not found|does not exist|is not defined|is unknown)/i,
    ],
  },
  {
    kind: 'agent',
    patterns: [
      /\bunknown (?:agent|speaker|recipient)[:\s]+['"`]?([\w.-]+)/i,
      /\bno (?:agent|speaker|recipient) (?:named|called)\s+['"`]?([\w.-]+)/i,
      /\b(?:agent|recipient)\s+['"`]([\w.-]+)['"`]\s+(?:is not available|not found|does not exist|is unknown)/i,
    ],
  },
];

const CODES = { file: 'MISSING_FILE', tool: 'UNKNOWN_TOOL', agent: 'UNKNOWN_AGENT' } as const;

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Whether a failed message failed because its instruction asked for something that does not
 * exist: the failure names a missing file (`File not found: /workspace/x.pdf`, `No such file or
 * directory: 'x.csv'`), an unknown tool or an unknown agent (an impossible hop), and the
 * instruction names that same thing (the full name, or a file's base name of 4+ characters;
 * tools and agents as whole words, any case). Otherwise null: a missing thing the instruction did
 * not name is the agent's own doing (it guessed a path), not the instruction's.
 */
export function impossibleInstruction(instruction: string, failure: string): ImpossibleInstruction | null {
  for (const { kind, patterns } of MISSING) {
    for (const p of patterns) {
      const m = p.exec(failure);
      const raw = m?.[1]?.replace(/[.,;:)\]]+$/, '');
      if (!raw) continue;
      const name = decoded(raw);
      if (kind === 'file') {
        const base = name.split(/[\\/]/).pop() ?? name;
        const text = decoded(instruction);
        if (text.includes(name) || (base.length >= 4 && text.includes(base))) return { kind, name, errorCode: CODES[kind] };
      } else {
        const word = new RegExp(`(^|[^\\w.-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w-])`, 'i');
        if (word.test(instruction)) return { kind, name, errorCode: CODES[kind] };
      }
    }
  }
  return null;
}
