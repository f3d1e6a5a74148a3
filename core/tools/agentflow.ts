/**
 * The tools of the AgentFlow template (examples/agentflow.yaml; Li et al. 2025, "In-the-Flow
 * Agentic System Optimization for Effective Planning and Tool Use", section 3.1: an action
 * planner, a tool executor, an execution verifier and a solution generator sharing an evolving
 * memory). The workflow's loop is an ordinary bounded loop edge (docs/workflow-spec.md); these
 * tools are the deterministic parts of each turn:
 *
 * - `call_tool` — the executor's tool call: runs the registry tool the planner named with the
 *   command the executor wrote as its one text input, and reports a failure as the step's result
 *   (as AgentFlow's executor records an error and goes on) instead of failing the run.
 * - `memory_recall` — the memory at the start of a turn: what the loop edge carried back from the
 *   last `memory_append` (nothing on the first turn).
 * - `memory_append` — adds `Action Step N: {tool_name, sub_goal, command, result}` and carries the
 *   verifier's stop signal, which the loop edge's condition reads.
 */
import { ToolError, typeName, type Tool } from './tool.ts';

/** Characters of a step's result kept in the memory (the rest is cut with `…`), so prompts stay short. */
export const MEMORY_RESULT_CHARS = 240;

/** One step of the memory. */
export interface ActionStep {
  tool_name: string;
  sub_goal: string;
  command: string;
  result: string;
}

/** Output of `memory_recall` and `memory_append`. */
export interface AgentMemory {
  /** `Action Step 1: {...}` lines, one per step, or `No action steps yet.`. */
  text: string;
  steps: ActionStep[];
  /** Steps so far. */
  count: number;
  /** `memory_append` only: the verifier's stop signal was true. */
  stop?: boolean;
}

/** Output of `call_tool`. */
export interface CallToolOutput {
  tool_name: string;
  command: string;
  /** False when the tool is unknown or failed; `result` then says why. */
  ok: boolean;
  /** The tool's answer as text (its `text` field, else its `value`, else its JSON), or `Error: <message>`. */
  result: string;
}

const NOT_CALLABLE = new Set(['call_tool', 'memory_recall', 'memory_append']);

/**
 * `call_tool` over the tools of `tools` (read when called, so tools registered later count).
 * Inputs: `tool_name` (a string), `command` (a string, or an object with a `command` field).
 * The named tool must have exactly one required input port; the command goes there (as a number
 * when the port takes a number). Output: `CallToolOutput`. An unknown tool, one that takes no
 * single command, and a tool error (`BAD_INPUT`, `PARSE_ERROR`, `NO_CORPUS`, ...) give
 * `ok: false` with the reason as `result`.
 * Errors (ToolError, the node's own): `BAD_INPUT` (tool_name or command missing or not text),
 * `ABORTED`.
 */
export function callToolTool(tools: { get(name: string): Tool | undefined; list(): Tool[] }): Tool {
  return {
    name: 'call_tool',
    description: 'Runs the tool named by tool_name with command as its one input (calculator: an expression; retrieve: a query). Returns {tool_name, command, ok, result}.',
    inputs: {
      tool_name: { type: 'string', description: 'A tool of the registry, e.g. calculator or retrieve.' },
      command: { type: 'any', description: 'The tool\'s one input, as text (or {command}).' },
    },
    output: {
      type: 'object',
      properties: { tool_name: { type: 'string' }, command: { type: 'string' }, ok: { type: 'boolean' }, result: { type: 'string' } },
      required: ['tool_name', 'command', 'ok', 'result'],
    },
    async run(inputs, ctx): Promise<CallToolOutput> {
      if (ctx.signal?.aborted) throw new ToolError('ABORTED', 'call_tool was cancelled before it ran', { tool: 'call_tool' });
      const name = inputs.tool_name;
      if (typeof name !== 'string') throw new ToolError('BAD_INPUT', `input 'tool_name' must be a string, got ${typeName(name)}`, { tool: 'call_tool' });
      const raw = inputs.command && typeof inputs.command === 'object' && !Array.isArray(inputs.command) ? (inputs.command as Record<string, unknown>).command : inputs.command;
      if (typeof raw !== 'string' && typeof raw !== 'number') throw new ToolError('BAD_INPUT', `input 'command' must be text, got ${typeName(raw)}`, { tool: 'call_tool' });
      const command = String(raw);
      const tool_name = name.trim().toLowerCase();
      const done = (ok: boolean, result: string): CallToolOutput => ({ tool_name, command, ok, result });
      const tool = NOT_CALLABLE.has(tool_name) ? undefined : tools.get(tool_name);
      if (!tool) {
        const callable = tools.list().filter((t) => !NOT_CALLABLE.has(t.name) && requiredPorts(t).length === 1).map((t) => t.name);
        return done(false, `Error: no tool named "${name}"; tools: ${callable.join(', ')}`);
      }
      const ports = requiredPorts(tool);
      if (ports.length !== 1) return done(false, `Error: ${tool_name} takes ${ports.length} required inputs (${ports.join(', ')}), not one command`);
      const port = ports[0]!;
      const value = tool.inputs[port]!.type === 'number' ? Number(command) : command;
      try {
        return done(true, resultText(await tool.run({ [port]: value }, ctx)));
      } catch (err) {
        if (err instanceof ToolError && err.code === 'ABORTED') throw err;
        return done(false, `Error: ${(err as Error).message}`);
      }
    },
  };
}

function requiredPorts(tool: Tool): string[] {
  return Object.entries(tool.inputs).filter(([, s]) => !s.optional).map(([p]) => p);
}

function resultText(out: unknown): string {
  if (typeof out === 'string') return out;
  if (out && typeof out === 'object') {
    const o = out as Record<string, unknown>;
    if (typeof o.text === 'string') return o.text;
    if (o.value !== undefined) return String(o.value);
  }
  return JSON.stringify(out) ?? String(out);
}

const EMPTY: AgentMemory = { text: 'No action steps yet.', steps: [], count: 0 };

/** The memory an input holds: a `memory_append`/`memory_recall` output, or empty for null / nothing. */
function memoryOf(value: unknown): AgentMemory {
  if (!value || typeof value !== 'object' || !Array.isArray((value as AgentMemory).steps)) return { ...EMPTY, steps: [] };
  const steps = (value as AgentMemory).steps.map((s) => ({ ...s }));
  return { text: renderSteps(steps), steps, count: steps.length };
}

/** `Action Step N: {"tool_name": ..., "sub_goal": ..., "command": ..., "result": ...}` per step, one per line. */
export function renderSteps(steps: readonly ActionStep[]): string {
  if (!steps.length) return EMPTY.text;
  return steps.map((s, i) => `Action Step ${i + 1}: ${JSON.stringify({ tool_name: s.tool_name, sub_goal: s.sub_goal, command: s.command, result: s.result })}`).join('\n');
}

/**
 * `memory_recall`: input `memory` (optional; the loop edge's value — a `memory_append` output —
 * or null on the first turn). Output: `AgentMemory` without `stop`. Never fails but `ABORTED`.
 */
export const memoryRecallTool: Tool = {
  name: 'memory_recall',
  description: 'The memory of the steps so far (what the last memory_append carried back; empty on the first turn). Returns {text, steps, count}.',
  inputs: { memory: { type: 'any', optional: true, description: 'The last memory_append output, or null.' } },
  output: { type: 'object', properties: { text: { type: 'string' }, steps: { type: 'array' }, count: { type: 'number' } }, required: ['text', 'steps', 'count'] },
  run(inputs, ctx): AgentMemory {
    if (ctx.signal?.aborted) throw new ToolError('ABORTED', 'memory_recall was cancelled before it ran', { tool: 'memory_recall' });
    return memoryOf(inputs.memory);
  },
};

/**
 * `memory_append`: inputs `memory` (the turn's `memory_recall` output), `tool_name`, `sub_goal`,
 * `command`, `result` (any values, written as text; the result cut to MEMORY_RESULT_CHARS) and
 * optional `stop` (the verifier's stop signal: true, or the text "true"/"stop"). Output:
 * `AgentMemory` with the new step last and `stop`. Never fails but `ABORTED`.
 */
export const memoryAppendTool: Tool = {
  name: 'memory_append',
  description: 'Adds "Action Step N: {tool_name, sub_goal, command, result}" to the memory and carries the stop signal. Returns {text, steps, count, stop}.',
  inputs: {
    memory: { type: 'any', description: 'The memory_recall output of this turn.' },
    tool_name: { type: 'any' },
    sub_goal: { type: 'any' },
    command: { type: 'any' },
    result: { type: 'any' },
    stop: { type: 'any', optional: true, description: 'The verifier\'s stop signal.' },
  },
  output: { type: 'object', properties: { text: { type: 'string' }, steps: { type: 'array' }, count: { type: 'number' }, stop: { type: 'boolean' } }, required: ['text', 'steps', 'count', 'stop'] },
  run(inputs, ctx): AgentMemory {
    if (ctx.signal?.aborted) throw new ToolError('ABORTED', 'memory_append was cancelled before it ran', { tool: 'memory_append' });
    const before = memoryOf(inputs.memory);
    const step: ActionStep = { tool_name: textOf(inputs.tool_name), sub_goal: textOf(inputs.sub_goal), command: textOf(inputs.command), result: cut(textOf(inputs.result)) };
    const steps = [...before.steps, step];
    const s = inputs.stop;
    const stop = s === true || (typeof s === 'string' && ['true', 'stop', 'yes'].includes(s.trim().toLowerCase()));
    return { text: renderSteps(steps), steps, count: steps.length, stop };
  },
};

function textOf(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
}

function cut(s: string): string {
  return s.length <= MEMORY_RESULT_CHARS ? s : `${s.slice(0, MEMORY_RESULT_CHARS - 1)}…`;
}
