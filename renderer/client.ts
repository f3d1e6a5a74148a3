/**
 * The client type the views code against: every API method (contract.ts: every feature's
 * methods, core/api/features/), each returning a Promise. renderer/api.ts builds it over IPC or HTTP; tests pass
 * a fake, so the store never imports the transport.
 */
import type { FlowlabClient } from '../core/api/client.ts';

export type LabClient = FlowlabClient;
