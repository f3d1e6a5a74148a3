import type { Command } from 'commander';
import { replayDesignFaultsFor, replayExperiment, storedWorkflowOptions } from '../../core/experiments/index.ts';
import { openStore } from '../../core/store/index.ts';
import { parseWorkflow } from '../../core/workflow/index.ts';
import { ReplayProvider } from '../../models/replay/index.ts';
import { act, dbOption, type CommandContext } from '../args.ts';
import { toolsOfExperiment } from '../wiring.ts';
import { formatReplay } from '../format.ts';
import type { Io } from '../io.ts';
import { replayHintsFor } from '../../core/distill/index.ts';

/** `flowlab replay <experiment-id>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<experiment-id> [--db file] [--json]')
    .description('Re-runs a stored experiment offline from its recorded model calls (no model is loaded) and\nreports, per node, whether every output matched the recording.')
    .argument('<experiment-id>', 'the experiment to replay')
    .addOption(dbOption())
    .option('--json', 'print one JSON object')
    .action(act(ctx, (id: string, o: { db: string; json?: boolean }) => replayCommand(id, o, ctx.io)));
}

async function replayCommand(experimentId: string, values: { db: string; json?: boolean }, io: Io): Promise<number> {
  const store = openStore(values.db, { mustExist: true });
  try {
    const exp = store.getExperiment(experimentId);
    const { tools, checks } = storedWorkflowOptions(exp.config, toolsOfExperiment(exp.config, values.db, io)); // a MASS step's checks and tools
    const { graph } = parseWorkflow(exp.workflowYaml, { tools, checks });
    const provider = new ReplayProvider(store.getExperimentCalls(exp.id));
    const designFault = replayDesignFaultsFor(exp, graph, tools);
    const report = await replayExperiment({ store, experimentId: exp.id, graph, provider, tools, checks, hints: replayHintsFor(store, exp, graph), designFault });
    if (values.json) {
      const { mismatches, ...rest } = report;
      io.stdout(JSON.stringify({ ...rest, mismatches: mismatches.slice(0, 100) }) + '\n');
    } else io.stdout(formatReplay(report));
    return report.mismatched === 0 ? 0 : 1;
  } finally {
    store.close();
  }
}
