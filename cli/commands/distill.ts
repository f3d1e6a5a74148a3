import path from 'node:path';
import { distillFromExperiment } from '../../core/distill/index.ts';
import type { RoleName } from '../../core/ids.ts';
import { openStore } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { parseWorkflow } from '../../core/workflow/index.ts';
import { intFlag, parse, UsageError } from '../args.ts';
import type { ModelConfig } from '../../core/model/index.ts';
import { llamaProvider } from '../../models/factory.ts';
import { formatCard } from '../formatCards.ts';
import { processIo, type Io } from '../io.ts';

export const DISTILL_USAGE = `Usage: flowlab distill --experiment <id> --role <role> [--shots K] [--teacher model.gguf] [--only-successes] [options]

Distils one hint card for a role from a stored experiment: picks the role's K best trajectories
by its ladder reward h (ties: higher score, then task order), asks the teacher model to write a
card {title, applies_when, advice} under a JSON-schema grammar, and stores it in the prior
library with its provenance. Prints the card. Cards from simulated trajectories (injected
faults, a scripted model) or a simulated teacher are stored and printed as SIMULATED.

Options:
  --experiment <id>      the experiment whose runs are the examples             [required]
  --role <role>          the role to write a card for                           [required]
  --shots <k>            exemplars (FloWright: 5 helped most; 1 scored below none) [default: 5]
  --teacher <file.gguf>  teacher model              [default: the role's own model in the experiment]
  --only-successes       only runs graded correct (successes only: +1.44 vs +0.53 with failures);
                         a tiny model may have none, and then nothing is distilled
  --budget <tokens>      teacher prompt budget, estimated as ceil(chars/4)       [default: 512]
  --max-tokens <n>       most tokens the teacher writes                          [default: 600]
  --seed <n>             teacher seed                                            [default: 0]
  --db <file>            SQLite database                                         [default: flowlab.db]
  --threads <n>          CPU threads         [default: 1 for files < 64 MB, else half the cores]
  --context-size <n>     teacher context tokens (prompt + card must fit)         [default: 2048]
  --gpu <auto|off>       GPU offload                                             [default: off]
  --json                 print the card as one JSON object
`;

export async function distillCommand(argv: string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    experiment: { type: 'string' },
    role: { type: 'string' },
    shots: { type: 'string', default: '5' },
    teacher: { type: 'string' },
    'only-successes': { type: 'boolean', default: false },
    budget: { type: 'string', default: '512' },
    'max-tokens': { type: 'string', default: '600' },
    seed: { type: 'string', default: '0' },
    db: { type: 'string', default: process.env.FLOWLAB_DB ?? 'flowlab.db' },
    threads: { type: 'string' },
    'context-size': { type: 'string', default: '2048' },
    gpu: { type: 'string' },
    json: { type: 'boolean', default: false },
  }, DISTILL_USAGE);
  if (positionals.length) throw new UsageError(`distill takes no positional arguments, got ${positionals.join(' ')}`, DISTILL_USAGE);
  if (!values.experiment) throw new UsageError('missing --experiment <id>', DISTILL_USAGE);
  if (!values.role) throw new UsageError('missing --role <role>', DISTILL_USAGE);
  const shots = intFlag(values.shots, 'shots', DISTILL_USAGE, { min: 1 })!;
  const budgetTokens = intFlag(values.budget, 'budget', DISTILL_USAGE, { min: 64 })!;
  const maxTokens = intFlag(values['max-tokens'], 'max-tokens', DISTILL_USAGE, { min: 16 })!;
  const seed = intFlag(values.seed, 'seed', DISTILL_USAGE)!;
  const threads = intFlag(values.threads, 'threads', DISTILL_USAGE, { min: 1 });
  const contextSize = intFlag(values['context-size'], 'context-size', DISTILL_USAGE, { min: 256 })!;
  const gpu = values.gpu === undefined || values.gpu === 'off' || values.gpu === 'false' ? false : values.gpu === 'auto' ? 'auto' : undefined;
  if (gpu === undefined) throw new UsageError(`--gpu takes auto or off, got "${values.gpu}"`, DISTILL_USAGE);
  const role = values.role;

  const store = openStore(values.db!, { mustExist: true });
  try {
    const exp = store.getExperiment(values.experiment);
    const { graph } = parseWorkflow(exp.workflowYaml, { tools: defaultTools() });
    if (!graph.roles.has(role as RoleName)) throw new UsageError(`--role "${role}": experiment ${exp.id} has no such role (roles: ${[...graph.roles.keys()].join(', ')})`, DISTILL_USAGE);
    const stored = (exp.config as { models?: ModelConfig } | null)?.models;
    // The role's own model: its reference in the stored config, with whatever that config says
    // about it (e.g. adapters), only the context size and threads changed.
    const ownRef = stored?.roleModels[role];
    const teacherRef = values.teacher ? 'teacher' : ownRef;
    const teacherFile = values.teacher ? path.resolve(values.teacher) : ownRef ? stored?.models[ownRef] : undefined;
    if (!teacherRef || !teacherFile) throw new UsageError(`experiment ${exp.id} records no model for role "${role}": pass --teacher <model.gguf>`, DISTILL_USAGE);
    if (shots === 1) io.stderr('Note: --shots 1: FloWright found 1-exemplar distillation scored below no distillation at all; 5 helped most.\n');
    const teacherConfig: ModelConfig = values.teacher
      ? { models: { teacher: teacherFile }, roleModels: {}, threads, contextSize, gpu }
      : { ...stored!, models: { [teacherRef]: teacherFile }, roleModels: {}, threads: threads ?? stored!.threads, contextSize, gpu: values.gpu === undefined ? stored!.gpu : gpu };
    const provider = await llamaProvider(teacherConfig);
    try {
      await provider.load?.();
      io.stderr(`Distilling a ${role} card from up to ${shots} ${values['only-successes'] ? 'successful ' : ''}trajectory(ies) of ${exp.id} with ${path.basename(teacherFile)}...\n`);
      const card = await distillFromExperiment({
        store, experimentId: exp.id, graph, role, shots, onlySuccesses: values['only-successes'],
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
