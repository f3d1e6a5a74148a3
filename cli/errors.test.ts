import { describe, expect, it } from 'vitest';
import { FlowlabError } from '../core/errors.ts';
import { ModelError } from '../core/model/errors.ts';
import { StoreError } from '../core/store/errors.ts';
import { ToolError } from '../core/tools/tool.ts';
import { SpecError } from '../core/workflow/errors.ts';
import { asNodeId } from '../core/ids.ts';
import { NodeFailure } from '../core/engine/failure.ts';
import { UsageError } from './args.ts';
import { EXIT, exitStatusFor, formatCliError } from './errors.ts';

const USAGE = 'Usage: flowlab show <experiment-id>\n';

describe('the CLI error table', () => {
  it('prints a usage error with the usage and exits 2', () => {
    const e = new UsageError('missing <experiment-id>');
    expect(exitStatusFor(e)).toBe(2);
    expect(formatCliError(e, 'show', USAGE)).toBe(`flowlab show: missing <experiment-id>\n\n${USAGE}`);
    expect(formatCliError(new UsageError('bad flag', 'Usage: own\n'), 'show', USAGE)).toBe('flowlab show: bad flag\n\nUsage: own\n');
  });

  it('tags a Flowlab error with its code and exits 1', () => {
    const e = new StoreError('NOT_FOUND', 'lab.db: no experiment exp-1', 'exp-1');
    expect(exitStatusFor(e)).toBe(1);
    expect(formatCliError(e, 'show', USAGE)).toBe('flowlab show: lab.db: no experiment exp-1 [NOT_FOUND]\n');
  });

  it('leaves the tag off when the message carries the code, and for a spec error', () => {
    expect(formatCliError(new ToolError('PARSE_ERROR', 'unexpected end'), 'run', USAGE)).toBe('flowlab run: PARSE_ERROR: unexpected end\n');
    const spec = new SpecError([{ code: 'UNKNOWN_NODE', path: ['edges', 0], message: 'no node "x"' }], 'w.yaml');
    expect(formatCliError(spec, 'run', USAGE)).toBe('flowlab run: Invalid workflow w.yaml:\n  <workflow> at edges[0]: no node "x" [UNKNOWN_NODE]\n');
    expect(exitStatusFor(spec)).toBe(1);
  });

  it('exits 130 for a cancellation', () => {
    expect(exitStatusFor(new ModelError('ABORTED', 'generation aborted'))).toBe(EXIT.cancelled);
    expect(exitStatusFor(new NodeFailure('infrastructure', 'CANCELLED', 'the run was cancelled'))).toBe(130);
    const abort = new Error('This operation was aborted');
    abort.name = 'AbortError';
    expect(exitStatusFor(abort)).toBe(130);
    expect(exitStatusFor(new ModelError('MODEL_NOT_FOUND', 'no file m.gguf', 'm.gguf'))).toBe(1);
  });

  it('tags a system error with its code, and prints anything else as it is', () => {
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open 'x.yaml'"), { code: 'ENOENT' });
    expect(formatCliError(enoent, 'run', USAGE)).toBe("flowlab run: ENOENT: no such file or directory, open 'x.yaml'\n");
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    expect(formatCliError(busy, 'run', USAGE)).toBe('flowlab run: database is locked [SQLITE_BUSY]\n');
    expect(formatCliError(new Error('boom'), 'run', USAGE)).toBe('flowlab run: boom\n');
    expect(formatCliError('a string', 'run', USAGE)).toBe('flowlab run: a string\n');
    expect(exitStatusFor(new Error('boom'))).toBe(1);
  });

  it('knows every area error as a FlowlabError', () => {
    for (const e of [new UsageError('x'), new StoreError('CLOSED', 'x'), new SpecError([]), new NodeFailure('wiring', 'UNKNOWN_TOOL', asNodeId('n'))]) {
      expect(e).toBeInstanceOf(FlowlabError);
    }
  });
});
