import { outFolder } from '../outPath.ts';
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { exportForTrl } from '../../core/rollouts/index.ts';
import { openStore, storedRollouts } from '../../core/store/index.ts';
import { act, dbOption, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { ModelConfig } from '../../core/model/index.ts';
import type { Io } from '../io.ts';
import type { RolloutsConfig } from '../../core/rollouts/index.ts';

interface ExportFlags {
  out?: string;
  advantage: string;
  format: string;
  sftFilter: string;
  roles?: string;
  db: string;
  json?: boolean;
  endpoint?: string;
  header?: string[];
  withContent?: boolean;
}

/** The formats that write traces of any experiment (exportTraces.ts) rather than TRL data of a rollouts experiment. */
const TRACE_FORMATS = ['otlp-json', 'otlp-http', 'csv', 'jsonl'] as const;

/** `flowlab export <experiment-id> --out <dir>`: TRL data of a rollouts experiment, or traces of any experiment or run (`--format otlp-json|otlp-http|csv|jsonl`). */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<experiment-id> --out <dir> [options]')
    .description([
      'Writes a rollouts experiment as JSONL that Hugging Face TRL reads as is, one pair of files per',
      'learning role, plus manifest.json (workflow hash, models, seeds, mode, counts):',
      '  <role>.grpo.jsonl  prompt-completion records + reward, advantage, group_id (label = advantage > 0: KTO)',
      '  <role>.sft.jsonl   conversational "messages" records (assistant_only_loss) of rollouts that beat their group',
      'See docs/training.md for the round trip (train a LoRA with TRL, convert to GGUF, --role-lora).',
      '',
      'With --format otlp-json|otlp-http|csv|jsonl it writes the traces of any experiment (or of one run,',
      'given its id) instead (docs/otel.md):',
      '  otlp-json  one OTLP/JSON file (--out <file.json>) of OpenTelemetry GenAI + OpenInference spans;',
      '             `flowlab import` reads it back; Arize Phoenix and Langfuse draw it',
      '  otlp-http  the same spans sent to a collector by OTLP/HTTP (--endpoint, --header)',
      '  csv|jsonl  runs, node_events and model_calls tables in the --out folder',
      'Spans carry no prompts, completions, inputs, outputs or workflow text unless --with-content.',
    ].join('\n'))
    .argument('<experiment-id>', 'the rollouts experiment (trace formats: any experiment, or a run id)')
    .addOption(new Option('--out <dir>', 'output folder (created); otlp-json: the .json file'))
    .option('--advantage <ladder|flow-grpo>', 'which advantages to export', 'ladder')
    .option('--format <format>', 'TRL: conversational (chat messages) or standard (plain text, base models); traces: otlp-json, otlp-http, csv, jsonl', 'conversational')
    .option('--endpoint <url>', 'otlp-http: the collector\'s traces URL (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else http://localhost:4318/v1/traces)')
    .option('--header <name=value>', 'otlp-http: a request header, e.g. Authorization=Basic ... (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--with-content', 'otlp-json, otlp-http: include prompts, completions, node inputs and outputs, answers and the workflow text')
    .option('--sft-filter <beat-group|correct>', 'which rollouts feed SFT', 'beat-group')
    .option('--roles <a,b>', "roles to export (default: the experiment's learning roles)")
    .addOption(dbOption())
    .option('--json', 'print the manifest as JSON')
    .action(act(ctx, (id: string, o: ExportFlags) => exportCommand(id, o, ctx.io)));
}

async function exportCommand(experimentId: string, values: ExportFlags, io: Io): Promise<number> {
  if ((TRACE_FORMATS as readonly string[]).includes(values.format)) {
    const { exportTraces } = await import('./exportTraces.ts');
    return exportTraces(experimentId, { ...values, format: values.format as (typeof TRACE_FORMATS)[number] }, io);
  }
  if (values.out === undefined) throw new UsageError('missing --out <dir>');
  const out = values.out;
  const advantageMode = oneOf(values.advantage, ['ladder', 'flow-grpo'] as const, 'advantage');
  const format = oneOf(values.format, ['conversational', 'standard', ...TRACE_FORMATS] as const, 'format') as 'conversational' | 'standard';
  const sftFilter = oneOf(values.sftFilter, ['beat-group', 'correct'] as const, 'sft-filter');
  const store = openStore(values.db, { mustExist: true });
  try {
    const exp = store.getExperiment(experimentId);
    const config = { rollouts: storedRollouts(exp), models: exp.config?.models };
    if (exp.kind !== 'rollouts' || !config.rollouts) throw new CommandError('WRONG_KIND', `experiment ${exp.id} is a ${exp.kind} experiment; export needs one made by \`flowlab rollouts\` (it has the groups and advantages)`);
    const roles = values.roles ? values.roles.split(',').map((r) => r.trim()).filter(Boolean) : config.rollouts.learningRoles;
    const advantages = store.improve.advantagesOf(exp.id);
    const known = new Set(advantages.map((a) => a.role));
    for (const r of roles) if (!known.has(r)) throw new UsageError(`--roles: no advantages stored for role "${r}" (roles: ${[...known].join(', ')})`);
    const runs = store.listRuns(exp.id).map((run) => ({ run, events: store.getRunEvents(run.runId) }));
    const trl = exportForTrl({
      experiment: { id: exp.id, workflowName: exp.workflowName, workflowHash: exp.workflowHash, seed: exp.seed, dataset: exp.dataset, split: exp.split },
      models: config.models?.models ?? {},
      mode: config.rollouts.mode,
      roles,
      runs,
      advantages,
      advantageMode,
      format,
      sftFilter,
    });
    const dir = outFolder(out);
    for (const [name, text] of Object.entries(trl.files)) {
      const target = path.join(dir, name);
      writeFileSync(`${target}.tmp`, text);
      renameSync(`${target}.tmp`, target); // atomic: a reader never sees half a file
    }
    if (values.json) io.stdout(JSON.stringify({ dir, ...trl.manifest }) + '\n');
    else {
      const counts = trl.manifest.counts as Record<string, { grpo: number; sft: number; zeroAdvantage: number; groups: number }>;
      io.stdout([
        `Exported ${exp.id} for TRL to ${dir} (${advantageMode} advantages, ${format} format):`,
        ...Object.entries(counts).map(([r, c]) => `  ${r}: ${c.grpo} GRPO/KTO records (${c.zeroAdvantage} with zero advantage) over ${c.groups} groups, ${c.sft} SFT records`),
        `  manifest.json`,
        '',
      ].join('\n'));
    }
    return 0;
  } finally {
    store.close();
  }
}

function oneOf<T extends string>(v: string, options: readonly T[], flag: string): T {
  if (!(options as readonly string[]).includes(v)) throw new UsageError(`--${flag} must be one of ${options.join(', ')}, got "${v}"`);
  return v as T;
}
