import path from 'node:path';
import { parseFaultSpec } from '../../core/faults/index.ts';
import { openStore } from '../../core/store/index.ts';
import { getDataset } from '../../core/tasks/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { parseWorkflow } from '../../core/workflow/index.ts';
import { pairs, parse, UsageError } from '../args.ts';
import { checkLoraFingerprints, fingerprintModel, type ModelConfig, loadedLlamaProvider } from '../compose.ts';
import { formatReport } from '../format.ts';
import { blameReportOf, buildInjector, formatBlame } from './blameEval.ts';
import { processIo, reportJson, runPending, type Io } from './common.ts';
import { assertCardsAvailable, cardHooksFor } from './cards.ts';
import { formatRollouts, storeAdvantages, type RolloutsConfig } from './rollouts.ts';

export const RESUME_USAGE = `Usage: flowlab resume <experiment-id> [--db file] [--model file] [--role-model role=file] [--force] [--json]

Finishes an interrupted, cancelled or halted experiment: runs only the tasks with no stored run,
with the same workflow text, models, seeds (and, for blame-eval, the same SIMULATED faults).
Finished runs are never redone or duplicated. Model files are checked against the fingerprint
taken when the experiment started; a moved file can be given again with --model / --role-model
(it must be the same file). --force takes over an experiment whose recorded process id belongs
to a live process (a reused pid after a crash). LoRA adapters (--role-lora) are applied again
from the stored config, and must be the same files.
`;

interface StoredConfig {
  workflowFile?: string;
  dataDir?: string;
  models: ModelConfig;
  inject?: string[];
  rollouts?: RolloutsConfig;
}

export async function resumeCommand(argv: string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    db: { type: 'string', default: process.env.FLOWLAB_DB ?? 'flowlab.db' },
    model: { type: 'string' },
    'role-model': { type: 'string', multiple: true },
    force: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  }, RESUME_USAGE);
  if (positionals.length !== 1) throw new UsageError('expected one <experiment-id>', RESUME_USAGE);
  const store = openStore(values.db!, { mustExist: true });
  try {
    let exp = store.getExperiment(positionals[0]!);
    const config = exp.config as StoredConfig;
    const tools = defaultTools();
    const { graph } = parseWorkflow(exp.workflowYaml, { tools, file: config.workflowFile ? path.basename(config.workflowFile) : undefined });
    const dataset = getDataset(exp.dataset, { dataDir: config.dataDir });
    const pending = store.pendingTasks(exp.id).length;
    const title = `${exp.workflowName} on ${exp.dataset}/${exp.split} (resumed)`;
    if (pending === 0) {
      io.stderr(`Nothing to resume: ${exp.id} has every task stored (${exp.status}).\n`);
      if (exp.kind === 'blame-eval') io.stdout(values.json ? JSON.stringify({ experimentId: exp.id, simulated: true, ...blameReportOf(store, exp.id, graph) }) + '\n' : formatBlame(blameReportOf(store, exp.id, graph), exp.id, config.inject ?? [], 0));
      return 0;
    }
    if (exp.status === 'running' && !values.force) {
      throw new Error(`experiment ${exp.id} is marked running in process ${exp.pid}; stop that process, or pass --force if that pid was reused by another program`);
    }
    const models = overrideModels(config.models, values.model, pairs(values['role-model'], 'role-model', RESUME_USAGE));
    // Same model files as when the experiment started, or refuse (nothing is recorded).
    for (const [ref, file] of Object.entries(models.models)) {
      const was = config.models.fingerprints?.[ref];
      const now = fingerprintModel(file);
      if (now === 'missing') throw new Error(`model file for "${ref}" not found: ${file}; restore it or pass its new path with --model / --role-model`);
      if (was && was !== 'missing' && was !== now) throw new Error(`model file for "${ref}" changed since the experiment started: ${file} (fingerprint ${was} -> ${now}); resuming would mix models in one experiment`);
    }
    checkLoraFingerprints(models); // the same LoRA adapters (--role-lora) as when it started, or refuse
    assertCardsAvailable(store, exp); // the same hint cards as when it started, or refuse
    const provider = await loadedLlamaProvider(models);
    if (values.force && exp.status === 'running') store.setExperimentStatus(exp.id, 'interrupted');
    exp = store.claimExperiment(exp.id);
    io.stderr(`Resuming ${exp.id}: ${pending} task(s) left.\n`);
    if (exp.kind === 'blame-eval') {
      const injector = buildInjector(graph, (config.inject ?? []).map(parseFaultSpec), exp.seed);
      const report = await runPending({
        store, experimentId: exp.id, graph, grader: dataset.grader, provider: injector.wrapProvider(provider), tools: injector.wrapTools(tools), seed: exp.seed, models, io,
        faultAt: (k, n, a) => injector.faultAt(k, n, a),
      });
      const blame = blameReportOf(store, exp.id, graph);
      io.stdout(values.json ? JSON.stringify({ experimentId: exp.id, simulated: true, inject: config.inject, ...blame }) + '\n' : formatBlame(blame, exp.id, config.inject ?? [], report.accuracy));
      return report.status === 'completed' ? 0 : 130;
    }
    if (exp.kind === 'rollouts' && config.rollouts) {
      const ro = config.rollouts;
      const report = await runPending({
        store, experimentId: exp.id, graph, grader: dataset.grader, provider, tools, seed: exp.seed, models, io,
        parallel: ro.group, sampling: { temperature: ro.temperature, topK: 0, topP: 1, minP: 0 }, recordTokens: ro.recordTokens,
      });
      const summary = storeAdvantages(store, exp.id, ro);
      io.stdout(values.json ? JSON.stringify({ experimentId: exp.id, ...summary, mode: ro.mode, group: ro.group, temperature: ro.temperature, accuracy: report.accuracy, wallSeconds: report.wallSeconds }) + '\n' : formatRollouts(exp.id, summary, ro, report.wallSeconds));
      return report.status === 'completed' ? 0 : 130;
    }
    const report = await runPending({ store, experimentId: exp.id, graph, grader: dataset.grader, provider, tools, seed: exp.seed, models, io, cards: cardHooksFor(store, exp, graph, provider, models, io) });
    io.stdout(values.json ? reportJson(report) : formatReport(report, title));
    return report.status === 'completed' ? 0 : 130;
  } finally {
    store.close();
  }
}

/** Points model references at new paths (a moved file); fingerprints are checked by the caller. */
function overrideModels(cfg: ModelConfig, model: string | undefined, roleModel: Record<string, string>): ModelConfig {
  const models = { ...cfg.models };
  if (model) {
    if (!('default' in models)) throw new UsageError('--model: this experiment has no "default" model reference', RESUME_USAGE);
    models.default = path.resolve(model);
  }
  for (const [role, file] of Object.entries(roleModel)) {
    const ref = cfg.roleModels[role];
    if (!ref) throw new UsageError(`--role-model: the experiment has no role "${role}" (roles: ${Object.keys(cfg.roleModels).join(', ')})`, RESUME_USAGE);
    models[ref] = path.resolve(file);
  }
  return { ...cfg, models };
}
