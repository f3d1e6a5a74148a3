/**
 * Re-delegation in MASS hops: a hop may say that when its sub-agent's reply breaks its contract
 * (schema or named check: the node fails), the orchestrator hands the same task, under the same
 * contract, to a sub-agent again — the same one (a retry) or another (`to`) — at most `max` times
 * (at most MAX_REDELEGATIONS), as MASS's orchestrator re-delegates a failed sub-task. Compiled
 * (compile.ts) as, per allowed re-delegation k, a decision node `<hop>_g<k>` (this tool: did the
 * latest reply keep its contract?) and the re-delegated call `<hop>_rd<k>_<to>`, which runs only
 * when the decision is `yes` (a conditional edge): both are nodes of the trace, the call wired by
 * the design's author and the orchestrator together, so the trace says who re-delegated to whom.
 */
import type { RunnableTool, ToolSource } from '../engine/index.ts';
import { ANSWER_TOOL, answerTool } from './answerTool.ts';

/** The decision tool's name (a MASS run's tool source adds it: `massTools`). */
export const REDELEGATE_TOOL = 'mass_redelegate';
/** Most re-delegations one hop may allow. */
export const MAX_REDELEGATIONS = 2;

/**
 * The decision: `yes` when the latest reply (`reply`, null when that call broke its contract) is
 * missing and no earlier decision of the hop said `no`; deterministic, no model call.
 */
export const redelegateTool: RunnableTool = {
  name: REDELEGATE_TOOL,
  inputs: { reply: { type: 'any', optional: true }, previous: { type: 'any', optional: true } },
  output: { type: 'object', properties: { redelegate: { enum: ['yes', 'no'] }, why: { type: 'string' } }, required: ['redelegate', 'why'] },
  run(inputs) {
    const previous = inputs['previous'] as { redelegate?: string } | null | undefined;
    if (previous && previous.redelegate === 'no') return { redelegate: 'no', why: 'an earlier reply kept its contract' };
    const reply = inputs['reply'];
    return reply === null || reply === undefined ? { redelegate: 'yes', why: 'the latest reply broke its contract' } : { redelegate: 'no', why: 'the latest reply kept its contract' };
  },
};

/** `tools` with the re-delegation decision and the answer assembly (answerTool.ts) added (what every MASS run parses and runs with). */
export function massTools(tools: ToolSource): ToolSource & { list?: () => Array<{ name: string }> } {
  const inner = tools as ToolSource & { list?: () => Array<{ name: string }> };
  return {
    get: (name) => (name === REDELEGATE_TOOL ? redelegateTool : name === ANSWER_TOOL ? answerTool : tools.get(name)),
    ...(inner.list && { list: () => [...inner.list!(), { name: REDELEGATE_TOOL }, { name: ANSWER_TOOL }] }),
  };
}
