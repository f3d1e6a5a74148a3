export { ADVANTAGE_EPS, groupAdvantages, ladderAdvantages, flowGrpoAdvantages, broadcastToTurns, type GroupStats, type Rollout, type RoleAdvantage, type Turn } from './advantages.ts';
export { parseMode, formatMode, learningRoles, ModeError, type CoevolutionMode } from './modes.ts';
export { exportForTrl, type TrlExportInput, type TrlExport, type GrpoRecord, type SftRecord, type ChatMessage } from './trlExport.ts';
export { groupRollouts, rolloutIndex, rolloutTaskId, groupKeyOf, type RolloutSummary } from './groups.ts';
export { storeAdvantages, type RolloutsConfig } from './store.ts';
