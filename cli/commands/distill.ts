import path from 'node:path';
import { Option, type Command } from 'commander';
import { distillFromExperiment } from '../../core/distill/index.ts';
import type { RoleName } from '../../core/ids.ts';
import { openStore, storedModels } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { parseWorkflow } from '../../core/workflow/index.ts';
import { act, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { gpuFlag } from '../flags.ts';
import type { ModelConfig } from '../../core/model/index.ts';
import { loadedLlamaProvider } from '../../models/factory.ts';
import { formatCard } from '../formatCards.ts';
import type { Io } from '../io.ts';

interface DistillFlags {
  experiment: string;
  role: string;
  shots: number;
  teacher?: string;
  onlySuccesses?: boolean;
  budget: number;
  maxTokens: number;
  seed: number;
  db: string;
  threads?: number;
  contextSize: number;
  gpu?: string;
  json?: boolean;
}

/** `flowlab distill --experiment <id> --role <role>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('--experiment <id> --role <role> [--shots K] [--teacher model.gguf] [--only-successes] [options]')
    .description([
      "Distils one hint card for a role from a stored experiment: picks the role's K best trajectories",
      'by its ladder reward h (ties: higher score, then task order), asks the teacher model to write a',
      'card {title, applies_when, advice} under a JSON-schema grammar, and stores it in the prior',
      'library with its provenance. Prints the card. Cards from simulated trajectories (injected',
      'faults, a scripted model) or a simulated teacher are stored and printed as SIMULATED.',
    ].join('\n'))
    .addOption(new Option('--experiment <id>', 'the experiment whose runs are the examples').makeOptionMandatory())
    .addOption(new Option('--role <role>', 'the role to write a card for').makeOptionMandatory())
    .addOption(intOption('--shots <k>', 'exemplars (FloWright: 5 helped most; 1 scored below none)', { min: 1, default: 5 }))
    .option('--teacher <file.gguf>', "teacher model (default: the role's own model in the experiment)")
    .option('--only-successes', 'only runs graded correct (successes only: +1.44 vs +0.53 with failures); a tiny model may have none, and then nothing is distilled')
    .addOption(intOption('--budget <tokens>', 'teacher prompt budget, estimated as ceil(chars/4)', { min: 64, default: 512 }))
    .addOption(intOption('--max-tokens <n>', 'most tokens the teacher writes', { min: 16, default: 600 }))
    .addOption(intOption('--seed <n>', 'teacher seed', { default: 0 }))
    .addOption(dbOption())
    .addOption(intOption('--threads <n>', 'CPU threads (default: 1 for files < 64 MB, else half the cores)', { min: 1 }))
    .addOption(intOption('--context-size <n>', 'teacher context tokens (prompt + card must fit)', { min: 256, default: 2048 }))
    .option('--gpu <auto|off>', 'GPU offload (default: off)')
    .option('--json', 'print the card as one JSON object')
    .action(act(ctx, (o: DistillFlags) => distillCommand(o, ctx.io)));
}

async function distillCommand(values: DistillFlags, io: Io): Promise<number> {
  const { shots, budget: budgetTokens, maxTokens, seed, threads, contextSize } = values;
  const gpu = gpuFlag(values.gpu);
  const role = values.role;

  const store = openStore(values.db, { mustExist: true, write: true });
  try {
    const exp = store.getExperiment(values.experiment);
    const { graph } = parseWorkflow(exp.workflowYaml, { tools: defaultTools() });
    if (!graph.roles.has(role as RoleName)) throw new UsageError(`--role "${role}": experiment ${exp.id} has no such role (roles: ${[...graph.roles.keys()].join(', ')})`);
    const stored = storedModels(exp);
    // The role's own model: its reference in the stored config, with whatever that config says
    // about it (e.g. adapters), only the context size and threads changed.
    const ownRef = stored?.roleModels[role];
    const teacherRef = values.teacher ? 'teacher' : ownRef;
    const teacherFile = values.teacher ? path.resolve(values.teacher) : ownRef ? stored?.models[ownRef] : undefined;
    if (!teacherRef || !teacherFile) throw new UsageError(`experiment ${exp.id} records no model for role "${role}": pass --teacher <model.gguf>`);
    if (shots === 1) io.stderr('Note: --shots 1: FloWright found 1-exemplar distillation scored below no distillation at all; 5 helped most.\n');
    const teacherConfig: ModelConfig = values.teacher
      ? { models: { teacher: teacherFile }, roleModels: {}, threads, contextSize, gpu }
      : { ...stored!, models: { [teacherRef]: teacherFile }, roleModels: {}, threads: threads ?? stored!.threads, contextSize, gpu: values.gpu === undefined ? stored!.gpu : gpu };
    const provider = await loadedLlamaProvider(teacherConfig);
    try {
      io.stderr(`Distilling a ${role} card from up to ${shots} ${values.onlySuccesses ? 'successful ' : ''}trajectory(ies) of ${exp.id} with ${path.basename(teacherFile)}...\n`);
      const card = await distillFromExperiment({
        store, experimentId: exp.id, graph, role, shots, onlySuccesses: Boolean(values.onlySuccesses),
        provider, teacherRef, seed, budgetTokens, maxTokens,
      });
      if (card.shots < shots) io.stderr(`Note: only ${card.shots} trajectory(ies) qualified (asked for ${shots}).\n`);
      io.stdout(values.json ? JSON.stringify(card) + '\n' : `Stored in ${store.file}:\n${formatCard(card)}`);
      return 0;
    } finally {
      await provider.dispose();
    }
  } finally {
    store.close();
  }
}
