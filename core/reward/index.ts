export { computeLadder, DEFAULT_WEIGHTS, outputFlags, RUNGS, type RoleLadder, type Rung, type LadderNode, type LadderEvent } from './ladder.ts';
