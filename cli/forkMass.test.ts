/**
 * `flowlab fork`, `flowlab replay` and `flowlab counterfactual` on a MASS step (core/mass/stored.ts):
 * a design whose hop names a MASS contract check (`names_a_tool`), run with a SIMULATED scripted
 * team into a database file, then driven through the commands in-process. Nothing here loads a
 * model: the fork is at the answer node, the last, so nothing runs live.
 */
import path from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseMassDesign } from '../core/mass/design.ts';
import { massFamily } from '../core/mass/family.ts';
import { runMass } from '../core/mass/run.ts';
import { ScriptedProvider } from '../core/model/scripted.ts';
import { openStore } from '../core/store/index.ts';
import { createLearnDataset } from '../core/tasks/learn.ts';
import { scratchDir } from '../test/fixtures.ts';
import type { CommandContext } from './args.ts';
import { define as defineCounterfactual } from './commands/counterfactual.ts';
import { define as defineFork } from './commands/fork.ts';
import { define as defineReplay } from './commands/replay.ts';

const dirs = scratchDir('cli-fork-mass');

async function run(define: (cmd: Command, ctx: CommandContext) => void, args: string[]): Promise<{ code: number | undefined; out: string; err: string }> {
  let out = '';
  let err = '';
  const ctx: CommandContext = { io: { stdout: (s) => void (out += s), stderr: (s) => void (err += s), isTTY: false } };
  const cmd = new Command('x').exitOverride();
  define(cmd, ctx);
  await cmd.parseAsync(args, { from: 'user' });
  return { code: ctx.status, out, err };
}

/** One stored MASS step: picker (checked by names_a_tool) -> checker -> the orchestrator's answer, which repeats the picker's wrong `weather`. */
async function massStep(db: string): Promise<void> {
  const family = massFamily('learn-tool');
  const task = createLearnDataset('learn-tool', ['tool']).load({ split: 'train', limit: 1 })[0]!;
  const parsed = parseMassDesign(
    { agents: [{ agent_id: 'picker', role: 'Tool picker', instruction: 'Name the tool.', contract: { fields: ['tool'], artefacts: ['note'], checks: ['names_a_tool'] } }, { agent_id: 'checker', role: 'Checker', instruction: 'Check it.' }], hops: ['picker', { agent_id: 'checker', reads: ['picker'] }] },
    { checks: family.checks.names() },
  );
  if (!parsed.ok) throw new Error('the design must parse');
  const team = new ScriptedProvider((r) => {
    if (r.key.nodeId === 'orchestrator') return 'ask the picker';
    if (r.key.nodeId === 'h1_picker') return '{"tool":"weather","note":"n"}';
    if (r.key.nodeId === 'h2_checker') return '{"reply":"agreed"}';
    return '"weather"';
  });
  const store = openStore(db);
  try {
    await runMass(parsed.design, task, { provider: team, family, store, config: { models: { models: { default: '/nonexistent/sim.gguf' }, roleModels: {}, gpu: false } } }, { experimentId: 'mass-step', version: 1 });
  } finally {
    store.close();
  }
}

describe('fork and replay of a MASS step whose hop names a MASS check', () => {
  it('replays the step, forks it at the answer with no model, replays the fork', async () => {
    const db = path.join(dirs(), 'mass.db');
    await massStep(db);
    const replayed = await run(defineReplay, ['mass-step', '--db', db, '--json']);
    expect(replayed.err).toBe('');
    expect(JSON.parse(replayed.out)).toMatchObject({ runs: 1, mismatched: 0, modelsLoaded: 0 });

    const f = await run(defineFork, ['mass-step/0', '--node', 'answer', '--output', '"search"', '--db', db, '--json']);
    expect(f.err).toBe('');
    const fork = JSON.parse(f.out);
    expect(fork.calls).toEqual({ recorded: { orchestrator: 1, h1_picker: 1, h2_checker: 1 }, intervened: 1, live: {}, upstream: 3, liveTotal: 0 });
    expect([fork.parentCorrect, fork.correct, fork.answer, fork.modelsLoaded]).toEqual([false, true, 'search', 0]);

    const again = await run(defineReplay, [fork.experimentId, '--db', db, '--json']);
    expect(again.err).toBe('');
    expect(JSON.parse(again.out)).toMatchObject({ runs: 1, mismatched: 0, modelsLoaded: 0 });

    // Counterfactual blame of the step: a silent run (every node ok, the answer wrong); learn-tool knows
    // only the answer node's right output, so that is the one fork, and it flips the run.
    const c = await run(defineCounterfactual, ['mass-step', '--intervene', 'each-node', '--with', 'oracle', '--db', db, '--json']);
    expect(c.err).toBe('');
    const report = JSON.parse(c.out);
    expect([report.runs, report.forks, report.untried]).toEqual([1, 1, 3]);
    expect(report.silent).toMatchObject({ runs: 1, located: 0, answerOnly: 1 });
    expect(report.verdicts[0].trials.find((t: { nodeId: string }) => t.nodeId === 'answer')).toMatchObject({ answerNode: true, flipped: true });
  });
});
