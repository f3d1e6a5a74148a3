export { runWorkflow, type RunOptions, type RunOutcome } from './runWorkflow.ts';
export { runNode, satisfiesContract, type RunnableTool, type ToolSource, type NodeContext } from './runNode.ts';
export { NodeFailure, type NodeErrorCode } from './failure.ts';
export { deriveSeed } from '../random.ts';
