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
