export * from './graph.ts';
export * from './errors.ts';
export { WorkflowSpec, workflowJsonSchema, type WorkflowDoc } from './spec.ts';
export { compileWorkflow, findCycle, type ToolLookup, type ToolShape, type CompileOptions } from './compile.ts';
export { parseWorkflow, loadWorkflowFile, type LoadOptions, type LoadedWorkflow } from './load.ts';
export { parseCondition, evalCondition, ConditionError, type Condition } from './condition.ts';
export { renderTemplate, templateRefs, templateProblem } from './template.ts';
export { CheckRegistry, BUILTIN_CHECKS, type Check } from './checks.ts';
