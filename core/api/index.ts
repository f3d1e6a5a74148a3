/**
 * The typed API both hosts expose (the Electron preload and the browser host): the features
 * (features/, one module per feature: payload schemas, result types, handlers), the contract
 * derived from them (`FlowlabApi`, `payloadSchemas`), the handlers over core, the method
 * allowlist, the lab host and its events (lab.ts) and typed errors. Renderer and preload code
 * import `./client.ts` instead, which carries no zod, store or Node code.
 */
export * from './client.ts';
export { MAX_CARDS, MAX_ID_LENGTH, MAX_INJECT, MAX_PATH_LENGTH, MAX_PROMPT_CHARS, MAX_ROLE_MODELS, MAX_RUN_LIMIT, MAX_WORKFLOW_CHARS } from './fields.ts';
export { payloadSchemas } from './contract.ts';
export { createHandlers, toApiError, validatePayload, validateWorkflowText, type HandlerDeps } from './handlers.ts';
export { cardTrustReader } from './features/cards.ts';
export { blameEvalOf, type BlameEvalView } from './features/evaluations.ts';
export { FEATURES } from './features/index.ts';
export { defineFeature, type Feature } from './feature.ts';
