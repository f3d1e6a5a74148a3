export { FaultInjector, FAULT_KINDS, TOOL_FAULT_KINDS, DESIGN_FAULT_KINDS, isDesignFaultKind, parseFaultSpec, FaultSpecError, instanceOf, type FaultKind, type DesignFaultKind, type FaultSpec, type InjectedFault } from './inject.ts';
export { DesignFaultInjector, injectDesignFault, type DesignFaultContext, type DesignFaultDecision, type TamperedDesign } from './design.ts';
