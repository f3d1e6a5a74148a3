export {
  ToolError,
  checkToolInputs,
  type Tool,
  type ToolContext,
  type ToolErrorCode,
  type ToolInputProblem,
  type ToolInputSpec,
  type ToolInputType,
} from './tool.ts';
export { ToolRegistry, defaultTools, type ToolDeps } from './registry.ts';
export { CODE_RUNNER_TIMEOUT_MS, MAX_CODE_LENGTH, MAX_TOOL_OUTPUT, codeRunnerTool, type CodeRunnerOutput } from './codeRunner.ts';
export { MAX_EXPRESSION_LENGTH, evaluateExpression } from './expression.ts';
export { calculatorTool, type CalculatorOutput } from './calculator.ts';
export { extractNumberTool } from './extractNumber.ts';
export { dispatchTool, learnDesignTool, mathTool, searchTool, useToolTool, weatherTool } from './learnDesign.ts';
export {
  BM25_PARAMS,
  CorpusError,
  RETRIEVE_DEFAULT_K,
  RETRIEVE_MAX_K,
  RETRIEVE_TEXT_CHARS,
  buildRetrieveIndex,
  loadRetrieveIndex,
  retrieveTool,
  type CorpusDocument,
  type CorpusErrorCode,
  type RetrieveHit,
  type RetrieveIndex,
  type RetrieveOutput,
} from './retrieve.ts';
export { MEMORY_RESULT_CHARS, callToolTool, memoryAppendTool, memoryRecallTool, renderSteps, type ActionStep, type AgentMemory, type CallToolOutput } from './agentflow.ts';
