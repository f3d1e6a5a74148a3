/**
 * The lab API's train loop (types and the event check only, no zod, so the preload and the
 * renderer can use them): `startTrainLoop` takes every option of `flowlab train-loop`
 * (cli/commands/trainLoop.ts) and the host maps it onto the same `TrainLoopSpec` of the same
 * service (`startTrainLoop` of core/experiments/trainLoop.ts); the loop's progress (rollouts
 * within an iteration, each iteration's metrics, held-out before/after, the end) arrives as
 * `TrainLoopEvent`s, a part of `LabEvent`. The payload's zod schema is in contract.ts.
 */

/**
 * `flowlab train-loop`'s defaults: its option defaults (cli/commands/trainLoop.ts), the values the
 * host gives the fields a request leaves out (host/trainLoop.ts) and the Learning form's initial
 * values (renderer/store/loop.ts) — one set for the CLI and the window.
 */
export const TRAIN_LOOP_DEFAULTS = {
  split: 'train',
  heldoutSplit: 'heldout',
  group: 8,
  iterations: 10,
  limit: 4,
  lr: 3e-4,
  kl: 0.02,
  temperature: 1,
  maxGradNorm: 1,
  heldout: 32,
  heldoutSamples: 4,
  seed: 0,
  /** Context tokens per sequence (`--context-size`). */
  contextSize: 512,
  warmStart: 0,
  sftSteps: 2,
  sftLr: 1e-3,
  sftMinScore: 1,
  entropy: 0,
  sftPool: 0,
} as const;

/**
 * What `startTrainLoop` takes: `flowlab train-loop <workflow> --dataset <name> [options]` as
 * data. Every field but `workflowText`, `dataset` and `models` is optional, with the CLI's
 * default. Versions are written under the lab's own versions folder (beside its database),
 * never a folder named by the request; datasets come from the lab's data folder.
 */
export interface StartTrainLoopRequest {
  /** The workflow document (YAML) as edited. */
  workflowText: string;
  /** `--dataset`, e.g. `learn-word`. */
  dataset: string;
  /** `--split`: the training split. Default `train`. */
  split?: string;
  /** `--heldout-split`. Default `heldout`. */
  heldoutSplit?: string;
  /** `--roles`: roles trained, each with its own weights. Default: every role running an agent node. */
  roles?: string[];
  /** `--group`: rollouts per task G, 1..64. Default 8. */
  group?: number;
  /** `--iterations`, 1..10000. Default 10. */
  iterations?: number;
  /** `--limit`: tasks per iteration (fresh tasks each time), 1..10000. Default 4. */
  limit?: number;
  /** `--lr`: Adam learning rate, in (0, 1). Default 3e-4. */
  lr?: number;
  /** `--kl`: weight of the k3 KL penalty to the starting model, 0..100. Default 0.02. */
  kl?: number;
  /** `--temperature`: sampling temperature, in (0, 5]. Default 1. */
  temperature?: number;
  /** `--entropy`: entropy bonus weight of the policy step, 0 (off)..1. Default 0. */
  entropy?: number;
  /** `--max-grad-norm`: gradient-norm clip, 0 (off)..1e6. Default 1. */
  maxGradNorm?: number;
  /** `--heldout`: held-out tasks, 0 (no held-out evaluation)..10000. Default 32. */
  heldout?: number;
  /** `--heldout-samples`: fixed-seed samples per held-out task, 1..64. Default 4. */
  heldoutSamples?: number;
  /** `--heldout-temperature`, 0 (greedy)..5. Default: `temperature`. */
  heldoutTemperature?: number;
  /** `--seed`, 0..2^31-1. Default 0. */
  seed?: number;
  /** `--warm-start`: iterations 1..k take SFT steps on each role's successful runs instead of policy steps, 0..10000. Default 0. */
  warmStart?: number;
  /** `--sft-mix`: after the warm start, the SFT step before the policy step every iteration. Default false. */
  sftMix?: boolean;
  /** `--sft-steps`: SFT passes over the successful calls per iteration, 1..100. Default 2. */
  sftSteps?: number;
  /** `--sft-lr`: SFT learning rate, in (0, 1). Default 1e-3. */
  sftLr?: number;
  /** `--sft-min-score`: a run is a success for a role when its score is at least this, in (0, 1]: one number, or per role (others 1). Default 1. */
  sftMinScore?: number | Record<string, number>;
  /** `--sft-roles`: the trained roles that take SFT steps. Default: every trained role. */
  sftRoles?: string[];
  /** `--sft-pool`: SFT on up to n distinct successes per task class from every iteration so far, 0 (this iteration only)..1000. Default 0. */
  sftPool?: number;
  /** `--model`, `--role-model role=file`: absolute GGUF paths. */
  models: { default?: string; roles?: Record<string, string> };
  /** `--role-version role=id`: a role starts from a recorded weight version (its lineage parent). */
  roleVersions?: Record<string, string>;
  /** `--threads`: CPU threads per model, 1..256. */
  threads?: number;
  /** `--context-size`: context tokens per sequence, 64..131072. Default 512. */
  contextSize?: number;
}

/** `cancelTrainLoop`'s payload. */
export interface CancelTrainLoopPayload {
  loopId: string;
}

/** One trained role's numbers in one iteration (a part of core/training's `RoleIterationMetrics`). */
export interface TrainRoleMetrics {
  /** Mean ladder reward h of the role over the iteration's rollouts. */
  reward: number;
  /** Mean k3 KL to the starting weights, and the loss of the policy step (absent without a step). */
  kl?: number;
  loss?: number;
  /** Samples trained on, and how many had a non-zero advantage. */
  samples: number;
  signalSamples: number;
  /** The version written this iteration (absent when the role had no samples). */
  versionId?: string;
  /** The step the role took: `grpo`, `sft`, `sft+grpo` or `none`. */
  step?: 'grpo' | 'sft' | 'sft+grpo' | 'none';
  /** SFT iterations: the successful calls trained on. */
  sftSequences?: number;
  /** Wiring root failures blamed on the role, per run. */
  wiringRootFailures?: number;
}

/**
 * A train loop's progress, ordered per loop. `trainLoop` opens (`running`) and closes
 * (`completed` / `cancelled` / `failed`, with `message`) each loop; `done` counts the iterations
 * finished of `iterations` planned.
 */
export type TrainLoopEvent =
  | { type: 'trainLoop'; loopId: string; status: 'running' | 'completed' | 'cancelled' | 'failed'; roles: string[]; done: number; iterations: number; message?: string }
  | { type: 'trainRollout'; loopId: string; iteration: number; done: number; total: number }
  | { type: 'trainIteration'; loopId: string; iteration: number; experimentId: string; score: number; sampledTokens: number; seconds: number; roles: Record<string, TrainRoleMetrics> }
  | {
      type: 'trainHeldout'; loopId: string; phase: 'before' | 'after'; experimentId: string; score: number; samples: number; roles: Record<string, number>;
      /** Share of runs correct; per class (datasets with classes): the share correct. */
      accuracy?: number;
      classes?: Record<string, number>;
    };

const LOOP_STATUSES: readonly string[] = ['running', 'completed', 'cancelled', 'failed'];

/** Whether `value` is a well-formed `TrainLoopEvent` (field by field, without zod). */
export function isTrainLoopEvent(value: unknown): value is TrainLoopEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  const str = (k: string, v: unknown = e[k]) => typeof v === 'string' && v.length > 0 && v.length <= 400;
  const count = (k: string) => Number.isInteger(e[k]) && (e[k] as number) >= 0;
  const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
  const optional = (v: unknown, ok: (v: unknown) => boolean) => v === undefined || ok(v);
  const record = (v: unknown, ok: (x: unknown) => boolean) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && Object.entries(v as object).every(([k, x]) => str(k, k) && ok(x));
  if (!str('loopId')) return false;
  switch (e['type']) {
    case 'trainLoop':
      return (
        LOOP_STATUSES.includes(e['status'] as string) && Array.isArray(e['roles']) && (e['roles'] as unknown[]).every((r) => str('', r)) &&
        count('done') && count('iterations') && optional(e['message'], (v) => typeof v === 'string')
      );
    case 'trainRollout':
      return count('iteration') && count('done') && count('total');
    case 'trainIteration':
      return (
        count('iteration') && str('experimentId') && num(e['score']) && count('sampledTokens') && num(e['seconds']) &&
        record(e['roles'], (x) => {
          const m = x as Record<string, unknown>;
          return (
            m !== null && typeof m === 'object' && num(m['reward']) && optional(m['kl'], num) && optional(m['loss'], num) &&
            Number.isInteger(m['samples']) && Number.isInteger(m['signalSamples']) && optional(m['versionId'], (v) => str('', v)) &&
            optional(m['step'], (v) => ['grpo', 'sft', 'sft+grpo', 'none'].includes(v as string)) && optional(m['sftSequences'], (v) => Number.isInteger(v)) && optional(m['wiringRootFailures'], num)
          );
        })
      );
    case 'trainHeldout':
      return (
        (e['phase'] === 'before' || e['phase'] === 'after') && str('experimentId') && num(e['score']) && count('samples') && record(e['roles'], num) &&
        optional(e['accuracy'], num) && optional(e['classes'], (v) => record(v, num))
      );
    default:
      return false;
  }
}
