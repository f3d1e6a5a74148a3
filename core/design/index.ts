export { runGraph, graphView, type DesignFaultHook, type GraphRunOptions, type GraphRunOutcome } from './run.ts';
export { compileDesign, type DesignCompile } from './compileDesign.ts';
export { effectiveGraph, runGraphOf, designOf, splice } from './effective.ts';
export { isDesignRecord, type DesignRecord, type DesignIssue, type DesignGraphView, type DesignFaultMark } from './record.ts';
export { designGrammar, catalogueText, designIds, DESIGN_DEFAULTS, NOTATION_KEYS } from '../workflow/compile/designStage.ts';
