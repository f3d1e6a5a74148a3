import { callToolTool, memoryAppendTool, memoryRecallTool } from './agentflow.ts';
import type { CodeSandbox } from '../sandbox/index.ts';
import { calculatorTool } from './calculator.ts';
import { codeRunnerTool } from './codeRunner.ts';
import { extractNumberTool } from './extractNumber.ts';
import { dispatchTool, mathTool, searchTool, useToolTool, weatherTool } from './learnDesign.ts';
import { retrieveTool, type RetrieveIndex } from './retrieve.ts';
import { ToolError, type Tool } from './tool.ts';

const TOOL_NAME = /^[a-z][a-z0-9_]*$/;

/** The tools a run may call, by name. */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  /** @throws ToolError `DUPLICATE_TOOL` / `BAD_TOOL` as `register`. */
  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /**
   * Adds a tool. Returns the registry (chainable).
   * @throws ToolError `BAD_TOOL` when the name is not `[a-z][a-z0-9_]*`;
   *   `DUPLICATE_TOOL` when the name is taken and `opts.replace` is not set.
   */
  register(tool: Tool, opts: { replace?: boolean } = {}): this {
    if (!TOOL_NAME.test(tool.name)) {
      throw new ToolError('BAD_TOOL', `tool name ${JSON.stringify(tool.name)} must be lowercase letters, digits and '_', starting with a letter`);
    }
    if (this.tools.has(tool.name) && !opts.replace) {
      throw new ToolError('DUPLICATE_TOOL', `a tool named '${tool.name}' is already registered`, { tool: tool.name });
    }
    this.tools.set(tool.name, tool);
    return this;
  }

  /** The tool of that name, or undefined (an unknown tool is a wiring fault; the engine reports it). */
  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  /** All tools, in registration order. */
  list(): Tool[] {
    return [...this.tools.values()];
  }
}

/** What the built-in tools may be given by a composition root (the adapters that feed them). */
export interface ToolDeps {
  /** The BM25 index of the user's corpus for `retrieve` (models/corpus builds it from `--corpus`). Absent: `retrieve` answers NO_CORPUS. */
  corpus?: RetrieveIndex;
  /** Where `code_runner` runs code (models/sandbox); without it the registry has no `code_runner`. */
  sandbox?: CodeSandbox;
}

/**
 * A fresh registry with the built-in tools: `calculator`, `extract_number`, the `learn-design`
 * family's `weather`, `search`, `math`, `use_tool` and `dispatch` (core/tools/learnDesign.ts),
 * `retrieve` over `deps.corpus` (core/tools/retrieve.ts), with `deps.sandbox` also `code_runner`
 * (core/tools/codeRunner.ts), and the AgentFlow template's `call_tool` (over this registry),
 * `memory_recall` and `memory_append` (core/tools/agentflow.ts).
 */
export function defaultTools(deps: ToolDeps = {}): ToolRegistry {
  const registry = new ToolRegistry([calculatorTool, extractNumberTool, weatherTool, searchTool, mathTool, useToolTool, dispatchTool, retrieveTool(deps.corpus)]);
  if (deps.sandbox) registry.register(codeRunnerTool(deps.sandbox));
  return registry.register(callToolTool(registry)).register(memoryRecallTool).register(memoryAppendTool);
}
