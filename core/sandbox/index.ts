export {
  SandboxError,
  checkSandboxRequest,
  type CodeSandbox,
  type SandboxErrorCode,
  type SandboxRequest,
  type SandboxResult,
  type SandboxStatus,
} from './types.ts';
