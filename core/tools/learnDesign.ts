/**
 * The tools of the `learn-design` task family (core/tasks/learnDesign.ts): `weather`, `search`
 * and `math`, each taking its one argument on a named port whose accepted values are an enum,
 * and answering with the exact text `<tool>:<argument>` (e.g. `weather:tomorrow`) that the
 * family's grader reads. Deterministic stand-ins for real services: what is graded is which tool
 * a workflow calls and with what, not a forecast. `use_tool` runs one of them by name, for
 * hand-wired workflows where a model picks the tool (examples/learn-design-fixed.yaml);
 * `dispatch` calls the tool an argument value belongs to (examples/designer-team.yaml).
 */
import { LEARN_DESIGN_TOOLS, LEARN_DESIGN_TOOL_NAMES, type LearnDesignTool } from '../tasks/learnDesign.ts';
import { ToolError, typeName, type Tool } from './tool.ts';

const DESCRIPTIONS: Record<LearnDesignTool, string> = {
  weather: 'Looks up the weather for a day',
  search: 'Searches for a kind of text',
  math: 'Does one arithmetic operation',
};

/** The argument on `port` of `tool`, checked against its values. Errors: ToolError `BAD_INPUT`, `ABORTED`. */
function argumentOf(tool: string, port: string, values: readonly string[], raw: unknown, signal?: AbortSignal): string {
  if (signal?.aborted) throw new ToolError('ABORTED', `${tool} was cancelled before it ran`, { tool });
  if (raw === undefined) throw new ToolError('BAD_INPUT', `input '${port}' is missing`, { tool });
  if (typeof raw !== 'string') throw new ToolError('BAD_INPUT', `input '${port}' must be a string, got ${typeName(raw)}`, { tool });
  const v = raw.trim().toLowerCase();
  if (!values.includes(v)) throw new ToolError('BAD_INPUT', `input '${port}' must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}`, { tool });
  return v;
}

/**
 * The tool of one `learn-design` tool name. Input: its port (`day`, `kind` or `op`), a string,
 * one of the port's `enum` values (trimmed, any case). Output: the string `<name>:<value>`.
 * Errors (ToolError): `BAD_INPUT` (missing, not a string, not one of the values), `ABORTED`.
 */
export function learnDesignTool(name: LearnDesignTool): Tool {
  const { port, values } = LEARN_DESIGN_TOOLS[name];
  return {
    name,
    description: `${DESCRIPTIONS[name]} (${port}: ${values.join(' | ')}). Returns the text "${name}:<${port}>".`,
    inputs: { [port]: { type: 'string', enum: values, description: `One of: ${values.join(', ')}.` } },
    output: { type: 'string', enum: values.map((v) => `${name}:${v}`) },
    run: (inputs, ctx) => `${name}:${argumentOf(name, port, values, inputs[port], ctx.signal)}`,
  };
}

export const weatherTool: Tool = learnDesignTool('weather');
export const searchTool: Tool = learnDesignTool('search');
export const mathTool: Tool = learnDesignTool('math');

/**
 * `use_tool`: calls the `learn-design` tool named by input `tool` with the argument on that
 * tool's port (`day`, `kind` or `op`; each optional, so a hand-wired workflow can route one
 * argument node per tool and leave the others unrun, null). Output: that tool's text, e.g.
 * `search:books`.
 * Errors (ToolError): `BAD_INPUT` (an unknown tool; the chosen tool's port missing, null, or not
 * one of its values), `ABORTED`.
 */
export const useToolTool: Tool = {
  name: 'use_tool',
  description: `Calls the tool named by "tool" (${LEARN_DESIGN_TOOL_NAMES.join(', ')}) with the argument on its port. Returns its text, e.g. "weather:today".`,
  inputs: {
    tool: { type: 'string', enum: LEARN_DESIGN_TOOL_NAMES, description: `One of: ${LEARN_DESIGN_TOOL_NAMES.join(', ')}.` },
    ...Object.fromEntries(LEARN_DESIGN_TOOL_NAMES.map((t) => {
      const { port, values } = LEARN_DESIGN_TOOLS[t];
      return [port, { type: 'string', optional: true, enum: values, description: `The ${t} tool's argument: ${values.join(', ')}.` }];
    })),
  },
  output: { type: 'string', enum: LEARN_DESIGN_TOOL_NAMES.flatMap((t) => LEARN_DESIGN_TOOLS[t].values.map((v) => `${t}:${v}`)) },
  run(inputs, ctx) {
    const tool = argumentOf('use_tool', 'tool', LEARN_DESIGN_TOOL_NAMES, inputs.tool, ctx.signal) as LearnDesignTool;
    const { port, values } = LEARN_DESIGN_TOOLS[tool];
    const raw = inputs[port];
    if (raw === undefined || raw === null) throw new ToolError('BAD_INPUT', `${tool} needs input '${port}' (${values.join(', ')}), got ${raw === null ? 'null' : 'nothing'}`, { tool: 'use_tool' });
    return `${tool}:${argumentOf('use_tool', port, values, raw, ctx.signal)}`;
  },
};

const TOOL_OF_ARGUMENT = new Map<string, LearnDesignTool>(LEARN_DESIGN_TOOL_NAMES.flatMap((t) => LEARN_DESIGN_TOOLS[t].values.map((v) => [v, t] as const)));

/**
 * `dispatch`: input `call`, either an argument value of one of the `learn-design` tools (the
 * values never coincide across tools, so the value names its tool) — then it calls that tool:
 * `tomorrow` -> `weather:tomorrow` — or a tool's answer, `<tool>:<argument>`, passed through
 * as it is. The fixed last node of examples/designer-team.yaml: whatever the designer wired, the
 * run answers with a tool call.
 * Errors (ToolError): `BAD_INPUT` (missing, not a string, neither an argument value nor a
 * tool's answer), `ABORTED`.
 */
export const dispatchTool: Tool = {
  name: 'dispatch',
  description: `Calls the tool (${LEARN_DESIGN_TOOL_NAMES.join(', ')}) whose argument "call" is, e.g. "tomorrow" -> "weather:tomorrow"; a tool's answer ("search:books") passes through.`,
  inputs: { call: { type: 'any', description: 'An argument value of one of the tools, or a tool\'s answer (a string).' } },
  output: { type: 'string', enum: LEARN_DESIGN_TOOL_NAMES.flatMap((t) => LEARN_DESIGN_TOOLS[t].values.map((v) => `${t}:${v}`)) },
  run(inputs, ctx) {
    if (ctx.signal?.aborted) throw new ToolError('ABORTED', 'dispatch was cancelled before it ran', { tool: 'dispatch' });
    const raw = inputs.call;
    if (raw === undefined || raw === null) throw new ToolError('BAD_INPUT', "input 'call' is missing", { tool: 'dispatch' });
    if (typeof raw !== 'string') throw new ToolError('BAD_INPUT', `input 'call' must be a string, got ${typeName(raw)}`, { tool: 'dispatch' });
    const v = raw.trim().toLowerCase();
    const [tool, arg] = v.split(':');
    if (arg !== undefined && TOOL_OF_ARGUMENT.get(arg) === tool) return v;
    const owner = TOOL_OF_ARGUMENT.get(v);
    if (owner) return `${owner}:${v}`;
    throw new ToolError('BAD_INPUT', `input 'call' must be an argument of ${LEARN_DESIGN_TOOL_NAMES.join(', ')} or a tool's answer, got ${JSON.stringify(raw)}`, { tool: 'dispatch' });
  },
};
