export * from './events.ts';
export { ENGINE_ERROR_CODES, isNodeErrorCode, type NodeErrorCode } from './codes.ts';
