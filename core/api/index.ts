/**
 * The typed API both hosts expose (the Electron preload and the browser host): the contract
 * (payload schemas, result types, `FlowlabApi`), the handlers over core, the channel allowlist,
 * the lab's additions (lab.ts: `LabHost`, `LabEvent`) and typed errors. Renderer and preload code
 * import `./client.ts` instead, which carries no zod, store or Node code.
 */
export * from './client.ts';
export {
  MAX_ID_LENGTH,
  MAX_INJECT,
  MAX_PATH_LENGTH,
  MAX_PROMPT_CHARS,
  MAX_ROLE_MODELS,
  MAX_RUN_LIMIT,
  MAX_WORKFLOW_CHARS,
  payloadSchemas,
} from './contract.ts';
export { createHandlers, toApiError, validatePayload, validateWorkflowText, type HandlerDeps } from './handlers.ts';
export { cardTrustReader } from './loopHandlers.ts';
export type { CardTrust, CompareExperimentsPayload, CompareView, DistillCardRequest, ExperimentGroupRef, ExperimentMeta, LoopApiAdditions } from './loop.ts';
