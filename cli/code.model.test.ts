import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../core/store/index.ts';
import { cli } from '../test/cli.ts';
import { haveShared, noteSkip, shared, tempDir, tinyModel as model } from '../test/fixtures.ts';

const haveCode = haveShared && existsSync(path.join(shared, 'data', 'humaneval', 'HumanEval.jsonl')) && existsSync(path.join(shared, 'data', 'mbpp', 'sanitized-mbpp.json'));
if (!haveCode) noteSkip('code.model.test', 'the HumanEval/MBPP CLI runs', `${model} or ${path.join(shared, 'data', 'humaneval')}`);

/** A workflow whose one node runs the task's MBPP asserts through code_runner (no function is defined, so they fail). */
const RUNNER = `name: mbpp-asserts
description: Runs the task's tests with code_runner.
roles:
  coder: { kind: executor, instructions: '' }
nodes:
  - id: run
    tool: code_runner
    role: coder
    inputs: { code: task.tests }
answer: run
`;

describe.skipIf(!haveCode)('code tasks through the CLI with the real tiny model and the real sandbox', () => {
  it('flowlab run examples/humaneval-single.yaml --dataset humaneval --limit 2 grades both completions in the sandbox', async () => {
    const db = path.join(tempDir('code'), 'he.db');
    const run = await cli(['run', 'examples/humaneval-single.yaml', '--dataset', 'humaneval', '--limit', '2', '--model', model, '--threads', '1', '--db', db, '--json']);
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out);
    expect(report).toMatchObject({ runs: 2, completionRate: 1, accuracy: 0, status: 'completed' });
    const store = openStore(db);
    const runs = store.listRuns(report.experimentId);
    expect(runs.map((r) => [r.taskId, r.status])).toEqual([['humaneval/test/0', 'completed'], ['humaneval/test/1', 'completed']]);
    // The tiny model writes stories, not Python: graded 0, and the canonical body is the expected answer.
    expect(runs.map((r) => r.score)).toEqual([0, 0]);
    expect(runs[0]!.expected).toContain('for idx, elem in enumerate(numbers)');
    store.close();
  }, 180_000);

  it('a code_runner node runs the task code in the sandbox and its result is the node output', async () => {
    const dir = tempDir('code');
    const file = path.join(dir, 'runner.yaml');
    writeFileSync(file, RUNNER);
    const db = path.join(dir, 'mbpp.db');
    const run = await cli(['run', file, '--dataset', 'mbpp', '--split', 'test', '--limit', '1', '--model', model, '--threads', '1', '--db', db, '--json']);
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out);
    const store = openStore(db);
    const [r] = store.listRuns(report.experimentId);
    const [event] = store.getRunEvents(r!.runId);
    expect(event!.output).toMatchObject({ status: 'error', error: expect.stringMatching(/^NameError: name '\w+' is not defined/) });
    expect(r!.score).toBe(0);
    store.close();
  }, 180_000);
});
