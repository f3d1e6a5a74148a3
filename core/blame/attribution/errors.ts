import { FlowlabError } from '../../errors.ts';

/**
 * Why an attribution evaluation cannot run (Who&When import failures are `WhoAndWhenError`):
 * - `JUDGE_BUDGET_TOO_SMALL`: the prompt budget cannot hold even a prompt's fixed parts;
 * - `JUDGE_NEEDS_MODEL`: a judge method was asked for without a model to judge with.
 */
export type AttributionErrorCode = 'JUDGE_BUDGET_TOO_SMALL' | 'JUDGE_NEEDS_MODEL';

/** An attribution evaluation that cannot run; the message says which option to change. */
export class AttributionError extends FlowlabError<AttributionErrorCode> {
  override readonly name: string = 'AttributionError';
}
