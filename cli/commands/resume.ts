import path from 'node:path';
import { openStore } from '../../core/store/index.ts';
import { getDataset } from '../../core/tasks/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { parseWorkflow } from '../../core/workflow/index.ts';
import { parse, UsageError } from '../args.ts';
import { llamaProvider, type ModelConfig } from '../compose.ts';
import { formatReport } from '../format.ts';
import { processIo, reportJson, runPending, type Io } from './common.ts';

export const RESUME_USAGE = `Usage: flowlab resume <experiment-id> [--db file] [--json]

Finishes an interrupted or cancelled experiment: runs only the tasks with no stored run,
with the same workflow text, models and seeds. Finished runs are never redone or duplicated.
`;

interface StoredConfig {
  workflowFile?: string;
  models: ModelConfig;
}

export async function resumeCommand(argv: string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    db: { type: 'string', default: process.env.FLOWLAB_DB ?? 'flowlab.db' },
    json: { type: 'boolean', default: false },
  }, RESUME_USAGE);
  if (positionals.length !== 1) throw new UsageError('expected one <experiment-id>', RESUME_USAGE);
  const store = openStore(values.db!);
  try {
    const exp = store.getExperiment(positionals[0]!);
    const config = exp.config as StoredConfig;
    const tools = defaultTools();
    const { graph } = parseWorkflow(exp.workflowYaml, { tools, file: config.workflowFile ? path.basename(config.workflowFile) : undefined });
    const dataset = getDataset(exp.dataset);
    const pending = store.pendingTasks(exp.id).length;
    if (exp.status === 'running') {
      throw new Error(`experiment ${exp.id} is running in process ${exp.pid}; stop it first or wait for it`);
    }
    store.claimExperiment(exp.id);
    io.stderr(`Resuming ${exp.id} (was ${exp.status}): ${pending} task(s) left.\n`);
    const provider = await llamaProvider(config.models);
    const report = await runPending({ store, experimentId: exp.id, graph, grader: dataset.grader, provider, tools, seed: exp.seed, models: config.models, io });
    io.stdout(values.json ? reportJson(report) : formatReport(report, `${exp.workflowName} on ${exp.dataset}/${exp.split} (resumed)`));
    return report.status === 'completed' ? 0 : 130;
  } finally {
    store.close();
  }
}
