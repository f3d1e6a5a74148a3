export * from './events.ts';
export { ENGINE_ERROR_CODES, isNodeErrorCode, type NodeErrorCode } from './codes.ts';
export {
  canonicalJson,
  compareEvents,
  diffRuns,
  differsText,
  DIFF_ASPECT_LABEL,
  DIFF_ASPECTS,
  firstDifference,
  type AlignedNode,
  type DiffAspect,
  type DiffGraph,
  type DiffSide,
  type Difference,
  type Divergence,
  type RunDiff,
} from './diff.ts';
