/** The intervention of a fork and the error a fork that cannot be made raises (core/experiments/fork.ts). */
import { FlowlabError } from '../errors.ts';

/**
 * What is changed at the fork node run:
 * - `output`: its output replaced. An agent node gets the text as its model's completion (so it is
 *   parsed and checked against the node's contract like any completion: a text that breaks the
 *   contract is a recorded failure of the node); a tool node returns it (JSON when it parses, else
 *   the text);
 * - `prompt`: its prompt template replaced (from this attempt on; the stored workflow text carries it);
 * - `role-model`: another model (a GGUF file or an `openai:` endpoint reference; `version`: the weight
 *   version it is, core/training) for a role, from the fork node run on (the role's earlier calls are
 *   served from the recording);
 * - `role-lora`: a LoRA adapter on the role's model from the fork node run on;
 * - `workflow`: a changed workflow text (an edited downstream graph): nodes the edit adds or rewires
 *   below the fork node run live; an edit that changes anything upstream is a RECORDING_MISMATCH;
 * - `seed`: the run's seed (every live call's seed derives from it);
 * - `unfault`: the node run re-run live without the SIMULATED fault a blame evaluation injected there
 *   (every other injected fault stays where it was): the counterfactual "had this node done its job".
 */
export type Intervention =
  | { kind: 'output'; output: string }
  | { kind: 'prompt'; prompt: string }
  | { kind: 'role-model'; role: string; model: string; version?: string }
  | { kind: 'role-lora'; role: string; lora: { path: string; scale?: number } }
  | { kind: 'seed'; seed: number }
  | { kind: 'workflow'; text: string }
  | { kind: 'unfault' };

/** Codes of ForkError. */
export type ForkErrorCode = 'UNKNOWN_RUN' | 'UNKNOWN_NODE' | 'NEVER_RAN' | 'UNKNOWN_ATTEMPT' | 'BAD_INTERVENTION' | 'INCOMPLETE_RECORDING' | 'RECORDING_MISMATCH' | 'MODEL_FAILED';

/** A fork that cannot be made; nothing was stored. `field` names the flag or request field at fault. */
export class ForkError extends FlowlabError<ForkErrorCode> {
  override readonly name = 'ForkError';
  constructor(code: ForkErrorCode, readonly field: string, message: string, options?: { cause?: unknown }) {
    super(code, message, { field }, options);
  }
}

