export { FaultInjector, FAULT_KINDS, TOOL_FAULT_KINDS, parseFaultSpec, FaultSpecError, instanceOf, type FaultKind, type FaultSpec, type InjectedFault } from './inject.ts';
export { scoreBlame, type BlameReport, type BlameRate } from './blameEval.ts';
