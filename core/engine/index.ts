export { runWorkflow, type RunOptions, type RunOutcome } from './runWorkflow.ts';
export { runNode, satisfiesContract, type RunnableTool, type ToolSource, type NodeContext } from './runNode.ts';
export { NodeFailure, type NodeErrorCode } from './failure.ts';
export { deriveSeed } from '../random.ts';
export {
  topologyOf,
  initialRunState,
  isReady,
  beginPass,
  nextReady,
  edgeInput,
  readField,
  decideNode,
  admitRun,
  loopToTake,
  reentrySet,
  startRun,
  finishNode,
  reenterLoop,
  settleRun,
  nodeEvent,
  runAnswer,
  tokenTotals,
  type NodeState,
  type Topology,
  type RunState,
  type NodeDecision,
  type RunResult,
  type EventOutcome,
  type FinishedNode,
} from './algo.ts';
export type { ReadyQueue } from './readyQueue.ts';
