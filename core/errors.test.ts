import { describe, expect, it } from 'vitest';
import { ApiError } from './api/errors.ts';
import { JudgeBudgetError } from './blame/attribution/judge.ts';
import { AttributionError } from './blame/attribution/index.ts';
import { FlowlabError, isFlowlabError, locationOf } from './errors.ts';
import { FaultSpecError, parseFaultSpec } from './faults/index.ts';
import { ModelError } from './model/errors.ts';
import { ModeError, parseMode } from './rollouts/index.ts';
import { StoreError } from './store/errors.ts';
import { DatasetError } from './tasks/errors.ts';
import { evaluateExpression } from './tools/expression.ts';
import { ToolError } from './tools/tool.ts';
import { isNodeErrorCode } from './trace/index.ts';
import { ConditionError, parseCondition } from './workflow/index.ts';

describe('the error base', () => {
  it('carries code, message and location, and stays an Error', () => {
    const e = new FlowlabError('X', 'what went wrong', { file: 'a.yaml', line: 3, col: 7 });
    expect(e).toBeInstanceOf(Error);
    expect([e.code, e.message, e.location]).toEqual(['X', 'what went wrong', { file: 'a.yaml', line: 3, col: 7 }]);
    expect(isFlowlabError(e)).toBe(true);
    expect(isFlowlabError(new Error('plain'))).toBe(false);
  });

  it('reads file:line locations', () => {
    expect(locationOf('data/test.jsonl:12')).toEqual({ file: 'data/test.jsonl', line: 12 });
    expect(locationOf('data/test.jsonl')).toEqual({ file: 'data/test.jsonl' });
    expect(locationOf('C:\\data\\x.jsonl')).toEqual({ file: 'C:\\data\\x.jsonl' });
    expect(locationOf(undefined)).toEqual({});
  });

  it('fills the location of each area error from what it knows', () => {
    expect(new DatasetError('BAD_LINE', 'bad', 'gsm8k/test.jsonl:5').location).toEqual({ file: 'gsm8k/test.jsonl', line: 5 });
    expect(new ApiError('BAD_REQUEST', 'startRun: bad', 'startRun', 'inject.0').location).toEqual({ field: 'inject.0' });
    expect(new ModelError('MODEL_NOT_FOUND', 'missing', '/m/a.gguf').location).toEqual({ file: '/m/a.gguf' });
    expect(new ModelError('MODEL_UNKNOWN_REF', 'no such model', 'big').location).toEqual({});
    const store = new StoreError('NOT_FOUND', 'no experiment exp-1', 'exp-1', { cause: 'x' });
    expect([store.name, store.code, store.where, store.location, store.cause, store instanceof FlowlabError]).toEqual(['StoreError', 'NOT_FOUND', 'exp-1', {}, 'x', true]);
    expect([new DatasetError('DATASET_NOT_FOUND', 'missing').where, new ModelError('ABORTED', 'aborted').location]).toEqual([undefined, {}]);
  });

  it('gives the parsers\' errors their codes and columns', () => {
    let err: unknown;
    try {
      parseCondition('score < "x');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConditionError);
    expect([(err as ConditionError).code, (err as ConditionError).location.col]).toEqual(['BAD_CONDITION', 9]);
    expect(() => parseFaultSpec('solver=nope')).toThrow(FaultSpecError);
    expect(() => parseMode('everyone')).toThrow(expect.objectContaining({ code: 'BAD_MODE', name: 'ModeError' }));
    expect(() => evaluateExpression('3 + 4))')).toThrow(expect.objectContaining({ code: 'PARSE_ERROR', location: { col: 6 } }));
    expect(new JudgeBudgetError('too small')).toMatchObject({ code: 'JUDGE_BUDGET_TOO_SMALL', name: 'JudgeBudgetError' });
    expect(new JudgeBudgetError('too small')).toBeInstanceOf(AttributionError);
    expect(new ToolError('DIVISION_BY_ZERO', 'x', { column: 2 })).toBeInstanceOf(FlowlabError);
    expect(new ModeError('m')).toBeInstanceOf(FlowlabError);
  });

  it('closes the node error codes: engine codes and model codes, not an abort', () => {
    expect(['UNKNOWN_TOOL', 'CANCELLED', 'MODEL_LOAD_FAILED', 'REPLAY_MISSING'].map(isNodeErrorCode)).toEqual([true, true, true, true]);
    expect(['ABORTED', 'NONZERO_EXIT', 'unknown_tool', ''].map(isNodeErrorCode)).toEqual([false, false, false, false]);
  });
});
