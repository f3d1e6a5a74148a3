/**
 * `flowlab blame-eval` with SIMULATED design (wiring) faults: the table shows the designer's rows
 * (formatted from a real report of the designed blame evaluation in core/experiments/designedBlameEval.fixture.ts), and
 * design kinds in the wrong place are usage errors before anything is recorded.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startExperiment } from '../core/experiments/index.ts';
import { designedBlameEval } from '../core/experiments/designedBlameEval.fixture.ts';
import { openStore } from '../core/store/index.ts';
import { capture, tempDir } from '../test/fixtures.ts';
import { formatBlame } from './formatExperiments.ts';
import { main } from './main.ts';

const DESIGNED = `
name: designed-cli
roles:
  designer: { kind: generator }
  executor: { kind: executor }
skills:
  expr: { prompt: "Expression for: {{question}}", output: { schema: { type: string } } }
design:
  role: designer
  prompt: "{{catalogue}}\\nQuestion: {{task.question}}\\nDesign:"
  catalogue: { tools: [calculator], skills: [expr], roles: [executor], inputs: [question] }
  budget: { max_nodes: 2 }
`;

describe('flowlab blame-eval with SIMULATED design faults', () => {
  it('the table has the designer row, the design kinds, the cascades behind bad wires and the kinds not applicable', async () => {
    const { deps, spec } = designedBlameEval();
    const out = await (await startExperiment(spec, deps)).done;
    const text = formatBlame(out.blame!.report, out.experimentId, spec.inject, out.report.accuracy);
    expect(text).toContain('Blame evaluation with SIMULATED faults (designer=dangling_edge@0.3, designer=unknown_tool@0.2, designer=missing_port@0.2, designer=unbounded_loop@0.2, designer=malformed@0.1, executor=contract@0.3, executor=malformed@0.2), 40 runs');
    const b = out.blame!.report;
    expect(text).toMatch(new RegExp(`designer\\s+│ 1\\.00\\s+│ 1\\.00\\s+│ ${b.byRole.designer!.injected}\\s+│ ${b.byRole.designer!.blamed}`));
    expect(text).toMatch(/executor\s+│ 1\.00\s+│ 1\.00/);
    for (const k of ['dangling_edge', 'unknown_tool', 'missing_port', 'unbounded_loop']) expect(text).toMatch(new RegExp(`${k}\\s+│ 1\\.00\\s+│ 1\\.00\\s+│ ${b.byKind[k]!.injected}\\s+│ ${b.byKind[k]!.injected}\\s+│ 0 \\(0%\\)`));
    expect(text).toContain(`Cascades behind a SIMULATED bad wire (design faults) not blamed: ${b.designCascades!.total} / ${b.designCascades!.total}`);
    expect(text).toContain(`Design faults drawn but not applicable (no place for them in the design; nothing injected): unknown_tool ${b.byKind.unknown_tool!.notApplicable}`);
  });

  it('a design kind for a role that is not the design role, or on a node: exit 2 with the reason, nothing recorded', async () => {
    const dir = tempDir('cli-design-faults');
    const wf = path.join(dir, 'designed.yaml');
    writeFileSync(wf, DESIGNED);
    const db = path.join(dir, 'x.db');
    const run = async (inject: string) => {
      const io = capture();
      const code = await main(['blame-eval', wf, '--dataset', 'gsm8k', '--model', 'm.gguf', '--db', db, '--inject', inject], io);
      return [code, io.err.split('\n')[0]];
    };
    expect(await run('executor=dangling_edge@0.5')).toEqual([2, 'flowlab blame-eval: --inject executor=dangling_edge@0.5: dangling_edge is a design (wiring) fault; it targets the design role "designer", not "executor"']);
    expect(await run('node:design=missing_port')).toEqual([2, 'flowlab blame-eval: bad --inject "node:design=missing_port": missing_port is a design fault; it targets the design role (e.g. designer=missing_port@0.3), not a node']);
    const store = openStore(db);
    expect(store.listExperiments()).toEqual([]);
    store.close();
  });
});
