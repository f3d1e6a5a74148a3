/**
 * host/: the node-side composition shared by the Electron utility process and `flowlab serve`.
 * It wires core (store, engine, experiments, tasks) and models/ (node-llama-cpp) into a
 * `LabHost` (core/api/lab.ts), and serves the API over HTTP + Server-Sent Events.
 */
export { createLabHost, DEFAULT_TEST_TOKENS, type LabHostHandle, type LabHostOptions } from './labHost.ts';
export { LabRunner, type LabRunnerOptions, type LoadableProvider } from './runner.ts';
export { ModelCatalog, readGgufHeader, testGeneration, type ModelCatalogOptions, type ModelHeader, type ReadModelHeader } from './models.ts';
export { ModelPaths, type ModelPathRoots } from './modelPaths.ts';
export { isPrivateAddress, ModelDownloads, type ModelDownloadsOptions } from './downloads.ts';
export { listExamples } from './examples.ts';
export { MAX_WORKFLOW_FILE_BYTES, WorkflowFolder } from './workflowFiles.ts';
export { listDatasets } from './datasets.ts';
export { DEV_CSP, PRODUCTION_CSP } from './security.ts';
export { createEventHub, type EventHub } from './events.ts';
export { STORE_WATCH_MS, watchStore, type StoreWatch } from './storeWatch.ts';
export { GUEST_BODY_BYTES, isLoopback, MAX_BODY_BYTES, RawJson, rendererMissingMessage, startLabServer, TOKEN_HEADER, type GuestAdmission, type GuestRequest, type GuestToken, type LabServer, type LabServerOptions } from './server.ts';
export { startModelServer, type ModelServer, type ModelServerOptions, type ModelServerStats } from './modelServer.ts';
export { ATTENDEE_COOKIE, ATTENDEE_METHODS, attendeeAllow, DEFAULT_ATTENDEE_LIMITS, RateLimitedError, type AttendeeLimits, type WorkshopExperiments } from './workshop.ts';
export { RateLimiter, type RateShape } from './rateLimit.ts';
export { createWorkflowValidator, type WorkflowValidator, type WorkflowValidatorOptions } from './workflowValidator.ts';
export { besideDatabase, defaultDatabase, ensureDataFolder, userDataFolder, type DataFolderContext } from './dataFolder.ts';
