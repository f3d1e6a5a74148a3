/**
 * Reproducibility (docs/laptop-rl.md "Reproducibility"): fingerprints of what determines an
 * experiment, train loop, study or evolution; digests of what it produced; comparisons of a
 * re-run with its original (`flowlab verify`, `flowlab repeat`).
 */
export { buildFingerprint, decodeSettings, fingerprintDifferences, recordFingerprint, repeatabilityOf, sha256Of, type Fingerprint, type Repeatability, type ReproEnvironment } from './fingerprint.ts';
export { experimentDigest, runsDigest, versionsDigest, type VersionHash } from './digest.ts';
export { compareRuns, compareVersions, type FirstRunDifference, type RunsComparison, type RunsSide, type VersionsComparison } from './compare.ts';
export { sampleTaskIndices } from './sample.ts';
export { experimentFingerprint, finishExperimentRecord, recordExperiment } from './experiment.ts';
export { finishTrainLoopRecord, loopVersionHashes, recordTrainLoop, trainLoopFingerprint } from './trainLoop.ts';
export { finishStudyRecord, recordStudy } from './study.ts';
export { finishEvolutionRecord, recordEvolution } from './evolution.ts';
