import path from 'node:path';
import Table from 'cli-table3';
import { groupRollouts, learningRoles, parseMode, rolloutIndex, rolloutTaskId, formatMode, type RolloutSummary } from '../../core/rollouts/index.ts';
import { openStore, type Store } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { loadWorkflowFile } from '../../core/workflow/index.ts';
import { intFlag, pairs, parse, UsageError } from '../args.ts';
import { resolveModels, withFingerprints, loadedLlamaProvider } from '../compose.ts';
import { processIo, runPending, type Io, loadTasks, EXPERIMENT_FLAGS, createWorkflowExperiment } from './common.ts';

export const ROLLOUTS_USAGE = `Usage: flowlab rollouts <workflow.yaml> --dataset gsm8k --model <file.gguf> --group G [options]

Runs G rollouts per task with distinct recorded seeds, decoded together (the G trajectories of a
group share the model's decode batches), then computes each role's group-relative advantage:
A = (h - mean) / (std + 1e-6) of the role's ladder reward h within the task's group (population
std; zero spread gives zero advantage and is reported), and Flow-GRPO's trajectory-level outcome
advantage broadcast to every turn. Sampling is on-policy: temperature T, topK 0, topP 1, minP 0.

Options:
  --group <G>               rollouts per task                              [required]
  --temperature <T>         sampling temperature for every agent node      [default: 0.8]
  --mode <mode>             who learns: single:<role>, upstream-downstream, agent-skill,
                            multi-agent                                     [default: multi-agent]
  --dataset, --split, --limit, --offset, --model, --role-model, --seed, --db, --data-dir,
  --threads, --context-size, --gpu   as in \`flowlab run\`
  --record-tokens           record each call's token ids (for \`flowlab train\`)
  --json                    print one JSON object
`;

export interface RolloutsConfig {
  group: number;
  temperature: number;
  mode: string;
  learningRoles: string[];
  /** Token ids recorded with every call (`--record-tokens`; resume records them too). */
  recordTokens?: boolean;
}

export async function rolloutsCommand(argv: string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...EXPERIMENT_FLAGS,
    limit: { type: 'string', default: '5' },
    group: { type: 'string' },
    temperature: { type: 'string', default: '0.8' },
    mode: { type: 'string', default: 'multi-agent' },
    'record-tokens': { type: 'boolean', default: false },
  }, ROLLOUTS_USAGE);
  if (positionals.length !== 1) throw new UsageError('missing <workflow.yaml>', ROLLOUTS_USAGE);
  if (!values.dataset) throw new UsageError('missing --dataset', ROLLOUTS_USAGE);
  if (!values.group) throw new UsageError('missing --group G', ROLLOUTS_USAGE);
  const G = intFlag(values.group, 'group', ROLLOUTS_USAGE, { min: 1 })!;
  if (G > 64) throw new UsageError('--group must be at most 64', ROLLOUTS_USAGE);
  const limit = intFlag(values.limit, 'limit', ROLLOUTS_USAGE, { min: 1 })!;
  const offset = intFlag(values.offset, 'offset', ROLLOUTS_USAGE)!;
  const seed = intFlag(values.seed, 'seed', ROLLOUTS_USAGE)!;
  const temperature = Number(values.temperature);
  if (!(temperature >= 0 && temperature <= 5)) throw new UsageError(`--temperature must be between 0 and 5, got "${values.temperature}"`, ROLLOUTS_USAGE);
  let mode;
  try {
    mode = parseMode(values.mode!);
  } catch (e) {
    throw new UsageError((e as Error).message, ROLLOUTS_USAGE);
  }

  const file = path.resolve(positionals[0]!);
  const tools = defaultTools();
  const workflow = loadWorkflowFile(file, { tools });
  const roles = learningRoles(workflow.graph, mode);
  const { dataset, tasks } = loadTasks(values.dataset, { dataDir: values['data-dir'], split: values.split!, limit, offset }, io);
  const models = {
    ...resolveModels(workflow.graph, {
      model: values.model, roleModel: pairs(values['role-model'], 'role-model', ROLLOUTS_USAGE),
      threads: intFlag(values.threads, 'threads', ROLLOUTS_USAGE, { min: 1 }), contextSize: intFlag(values['context-size'], 'context-size', ROLLOUTS_USAGE, { min: 256 }), gpu: values.gpu,
    }, ROLLOUTS_USAGE),
    sequences: Math.max(4, G),
    batching: 'mixed' as const,
  };
  const provider = await loadedLlamaProvider(models);
  const rollouts: RolloutsConfig = { group: G, temperature, mode: formatMode(mode), learningRoles: roles, ...(values['record-tokens'] && { recordTokens: true }) };
  const store = openStore(values.db!);
  try {
    const exp = createWorkflowExperiment(store, {
      kind: 'rollouts',
      workflow,
      dataset: dataset.name,
      split: values.split!,
      limit,
      seed,
      config: { workflowFile: file, offset, dataDir: values['data-dir'], models: withFingerprints(models), rollouts },
      tasks: tasks.flatMap((t, ti) => Array.from({ length: G }, (_, g) => ({ taskIndex: rolloutIndex(ti, g, G), taskId: rolloutTaskId(t.id, g), input: t.input, expected: t.expected }))),
    });
    io.stderr(`Rollouts ${exp.id}: ${tasks.length} tasks x G=${G} at temperature ${temperature}, learning roles ${roles.join(', ')} (${rollouts.mode})\n`);
    const report = await runPending({
      store, experimentId: exp.id, graph: workflow.graph, grader: dataset.grader, provider, tools, seed, models, io,
      parallel: G, sampling: { temperature, topK: 0, topP: 1, minP: 0 }, recordTokens: values['record-tokens'],
    });
    const summary = storeAdvantages(store, exp.id, rollouts);
    io.stdout(values.json ? JSON.stringify({ experimentId: exp.id, ...summary, mode: rollouts.mode, group: G, temperature, accuracy: report.accuracy, wallSeconds: report.wallSeconds }) + '\n' : formatRollouts(exp.id, summary, rollouts, report.wallSeconds));
    return report.status === 'completed' ? 0 : 130;
  } finally {
    store.close();
  }
}

/** Computes and stores (one transaction) the advantages of every complete group; returns the summary. */
export function storeAdvantages(store: Store, experimentId: string, cfg: RolloutsConfig): RolloutSummary {
  const { rows, summary } = groupRollouts(store.listRuns(experimentId), cfg.group, cfg.learningRoles);
  store.improve.saveAdvantages(rows);
  return summary;
}

export function formatRollouts(id: string, s: RolloutSummary, cfg: RolloutsConfig, wall: number): string {
  const t = new Table({ head: ['role', 'reward h mean', 'h std', 'advantage mean', 'advantage std', 'zero-spread groups'], style: { head: [], border: [], compact: true } });
  for (const [role, r] of Object.entries(s.roles)) {
    t.push([role, r.reward.mean.toFixed(3), r.reward.std.toFixed(3), r.advantage.mean.toFixed(3), r.advantage.std.toFixed(3), `${r.zeroSpreadGroups} / ${s.groups}`]);
  }
  return [
    `Rollouts: ${s.groups} groups x G=${cfg.group} = ${s.trajectories} trajectories (${cfg.mode}; learning roles ${cfg.learningRoles.join(', ')}), ${wall.toFixed(2)} s`,
    t.toString(),
    `Groups with no signal (every learning role's h equal): ${s.zeroSpreadGroups}; groups with equal outcomes (no Flow-GRPO signal): ${s.zeroSpreadOutcomeGroups}.`,
    `Advantages stored per run and role (ladder and flow-grpo). Export for TRL: flowlab export ${id} --out <dir>`,
    `Experiment: ${id}`,
    '',
  ].join('\n');
}
