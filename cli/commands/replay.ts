import { replayExperiment } from '../../core/experiments/index.ts';
import { openStore } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { parseWorkflow } from '../../core/workflow/index.ts';
import { ReplayProvider } from '../../models/replay/index.ts';
import { parse, UsageError } from '../args.ts';
import { formatReplay } from '../format.ts';
import { processIo, type Io } from '../io.ts';
import { replayHintsFor } from '../../core/distill/index.ts';

export const REPLAY_USAGE = `Usage: flowlab replay <experiment-id> [--db file] [--json]

Re-runs a stored experiment offline from its recorded model calls (no model is loaded) and
reports, per node, whether every output matched the recording.
`;

export async function replayCommand(argv: string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    db: { type: 'string', default: process.env.FLOWLAB_DB ?? 'flowlab.db' },
    json: { type: 'boolean', default: false },
  }, REPLAY_USAGE);
  if (positionals.length !== 1) throw new UsageError('expected one <experiment-id>', REPLAY_USAGE);
  const store = openStore(values.db!, { mustExist: true });
  try {
    const exp = store.getExperiment(positionals[0]!);
    const tools = defaultTools();
    const { graph } = parseWorkflow(exp.workflowYaml, { tools });
    const provider = new ReplayProvider(store.getExperimentCalls(exp.id));
    const report = await replayExperiment({ store, experimentId: exp.id, graph, provider, tools, hints: replayHintsFor(store, exp, graph) });
    if (values.json) {
      const { mismatches, ...rest } = report;
      io.stdout(JSON.stringify({ ...rest, mismatches: mismatches.slice(0, 100) }) + '\n');
    } else io.stdout(formatReplay(report));
    return report.mismatched === 0 ? 0 : 1;
  } finally {
    store.close();
  }
}
