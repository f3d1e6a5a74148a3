export { computeLadder, DEFAULT_WEIGHTS, RUNGS, type RoleLadder, type Rung, type LadderNode, type LadderEvent } from './ladder.ts';
