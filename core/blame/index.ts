/**
 * Blame: who made a run fail, found three ways, in one vocabulary (the glossary in
 * docs/architecture.md).
 *
 * - credit/       structural credit: from a run's graph and trace, each failure's root failures,
 *                 the cascades below them, blame per role and silent runs (pure; used by the
 *                 pipeline and the reward ladder).
 * - attribution/  judged attribution: a judge model (or a model-free rule) names the agent and
 *                 step at fault in a log (Who&When), scored against hand labels.
 * - eval/         blame evaluation: structural blame scored against the ground truth of
 *                 SIMULATED injected faults (core/faults) - precision, recall, unseen faults.
 *
 * Other rooms import blame through this file. Inside core, the modules below the pipeline
 * (reward, results, store) import blame/credit directly.
 */
export * from './credit/index.ts';
export * from './attribution/index.ts';
export { scoreBlame, type BlameReport, type BlameRate, type BlameRun } from './eval/scoreBlame.ts';
