import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { ForkError, forkRun, parseNodeRef, type ForkOutcome, type Intervention } from '../../core/experiments/index.ts';
import { openStore, type SqliteStore } from '../../core/store/index.ts';
import type { RunRecord } from '../../core/results/index.ts';
import { ReplayProvider } from '../../models/replay/index.ts';
import { act, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import { cliDeps, toolsOfExperiment } from '../wiring.ts';
import type { Io } from '../io.ts';

interface ForkFlags {
  db: string;
  node: string;
  output?: string;
  prompt?: string;
  roleModel?: string;
  roleVersion?: string;
  roleLora?: string;
  editWorkflow?: string;
  seed?: number;
  threads?: number;
  json?: boolean;
}

/** `flowlab fork <run-id> --node <id>[@attempt] <one intervention>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<run-id> --node <node-id>[@attempt] (--output <text|@file> | --prompt <text|@file> | --role-model role=<file|endpoint> | --role-version role=<id> | --role-lora role=<adapter.gguf[@scale]> | --seed S | --edit-workflow @file) [--threads N] [--db file] [--json]')
    .description([
      'Re-runs a stored run from one node run on, with one intervention there (docs/fork.md). Everything',
      'upstream of the node run is served from the run\'s recording (no model is loaded for it; prompts are',
      'checked against the recording); the node and every node run that depends on it run live. The fork',
      'is graded, credited and laddered, and stored as a run of its own `fork` experiment linked to its',
      'parent (parent run, node, attempt, intervention); `flowlab diff <parent> <fork>` names where they',
      'part, `flowlab replay <fork-experiment>` replays it without a model. The parent is never changed.',
      'Attempts start at 1 (a loop\'s second pass is <node>@2); without @attempt, the first that ran.',
    ].join('\n'))
    .argument('<run-id>', 'the run to fork (<experiment-id>/<task-index>)')
    .requiredOption('--node <node-id[@attempt]>', 'the node run to fork at')
    .option('--output <text|@file>', "replace the node's output: an agent node gets it as its completion (parsed and checked against its contract), a tool node returns it")
    .option('--prompt <text|@file>', "replace the node's prompt template (an agent node of the workflow)")
    .option('--role-model <role=file|endpoint>', 'another model for a role from the node run on (a GGUF file or an openai: reference)')
    .option('--role-version <role=version-id>', 'a trained weight version (flowlab versions) as the role\'s model from the node run on')
    .option('--role-lora <role=adapter.gguf[@scale]>', 'a LoRA adapter on the role\'s model from the node run on')
    .option('--edit-workflow <@file>', 'a changed workflow (an edited downstream graph); anything changed upstream of the node is refused (RECORDING_MISMATCH)')
    .addOption(intOption('--seed <S>', "the fork's run seed (every live call's seed derives from it)"))
    .addOption(intOption('--threads <n>', 'CPU threads of the live models (default: the parent\'s)', { min: 1 }))
    .addOption(dbOption())
    .option('--json', 'print one JSON object')
    .action(act(ctx, (id: string, o: ForkFlags) => forkCommand(id, o, ctx.io)));
}

function textOf(value: string, flag: string): string {
  if (!value.startsWith('@')) return value;
  const file = path.resolve(value.slice(1));
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new CommandError('BAD_FILE', `--${flag} ${value}: cannot read ${file}: ${(err as Error).message}`, { file, field: flag }, { cause: err });
  }
}

/** The one intervention the flags name. Errors: UsageError when none or more than one is given. */
export function interventionOf(o: Pick<ForkFlags, 'output' | 'prompt' | 'roleModel' | 'roleVersion' | 'roleLora' | 'editWorkflow' | 'seed'>, versionPath: (id: string) => string = (id) => id): Intervention {
  const flags = { output: '--output', prompt: '--prompt', roleModel: '--role-model', roleVersion: '--role-version', roleLora: '--role-lora', editWorkflow: '--edit-workflow', seed: '--seed' } as const;
  const given = (Object.keys(flags) as Array<keyof typeof flags>).filter((k) => o[k] !== undefined);
  if (given.length !== 1) throw new UsageError(`give exactly one intervention: ${Object.values(flags).join(', ')}${given.length ? ` (got ${given.map((g) => flags[g]).join(', ')})` : ''}`);
  if (o.output !== undefined) return { kind: 'output', output: textOf(o.output, 'output') };
  if (o.prompt !== undefined) return { kind: 'prompt', prompt: textOf(o.prompt, 'prompt') };
  if (o.seed !== undefined) return { kind: 'seed', seed: o.seed };
  if (o.editWorkflow !== undefined) {
    if (!o.editWorkflow.startsWith('@')) throw new UsageError(`--edit-workflow "${o.editWorkflow}": expected @<file>`);
    return { kind: 'workflow', text: textOf(o.editWorkflow, 'edit-workflow') };
  }
  if (o.roleVersion !== undefined) {
    const v = /^([^=\s]+)=(.+)$/.exec(o.roleVersion);
    if (!v) throw new UsageError(`--role-version "${o.roleVersion}": expected role=<version-id>`);
    return { kind: 'role-model', role: v[1]!, model: versionPath(v[2]!), version: v[2]! };
  }
  if (o.roleLora !== undefined) {
    const l = /^([^=\s]+)=(.+?)(?:@(\d+(?:\.\d+)?))?$/.exec(o.roleLora);
    if (!l) throw new UsageError(`--role-lora "${o.roleLora}": expected role=<adapter.gguf>[@scale]`);
    return { kind: 'role-lora', role: l[1]!, lora: { path: path.resolve(l[2]!), ...(l[3] !== undefined && { scale: Number(l[3]) }) } };
  }
  const m = /^([^=\s]+)=(.+)$/.exec(o.roleModel!);
  if (!m) throw new UsageError(`--role-model "${o.roleModel}": expected role=<file.gguf|openai:...>`);
  const model = m[2]!.startsWith('openai:') ? m[2]! : path.resolve(m[2]!);
  return { kind: 'role-model', role: m[1]!, model };
}

/**
 * The run to fork. @throws ForkError UNKNOWN_RUN (field `run`) naming the database, with the run
 * ids to use when `runId` is an experiment's id.
 */
function parentRun(store: SqliteStore, runId: string): RunRecord {
  try {
    return store.getRun(runId);
  } catch (err) {
    if ((err as { code?: string }).code !== 'NOT_FOUND') throw err;
    const hint = store.findExperiment(runId) ? `; "${runId}" is an experiment: fork one of its runs, <experiment-id>/<task index> (e.g. ${runId}/0)` : ' (a run id is <experiment-id>/<task index>)';
    throw new ForkError('UNKNOWN_RUN', 'run', `no run "${runId}" in ${store.file}${hint}`, { cause: err });
  }
}

async function forkCommand(runId: string, o: ForkFlags, io: Io): Promise<number> {
  const { nodeId, attempt } = parseNodeRef(o.node);
  const store = openStore(o.db, { mustExist: true, write: true });
  try {
    const intervention = interventionOf(o, (id) => store.weights.get(id).path);
    const parent = parentRun(store, runId);
    const tools = toolsOfExperiment(store.getExperiment(parent.experimentId).config, o.db, io);
    const deps = { ...cliDeps(store, tools), tools, replay: (calls: ConstructorParameters<typeof ReplayProvider>[0], opts: { checkPrompts: boolean }) => new ReplayProvider(calls, opts) };
    const out = await forkRun({ parentRunId: parent.runId, nodeId, ...(attempt !== undefined && { attempt }), intervention, ...(o.threads !== undefined && { threads: o.threads }) }, deps);
    io.stdout(o.json ? JSON.stringify(forkJson(out)) + '\n' : formatFork(out));
    return 0;
  } finally {
    store.close();
  }
}

const sum = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
const list = (m: Record<string, number>) => Object.entries(m).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';

/** The JSON `flowlab fork --json` prints. */
export function forkJson(out: ForkOutcome) {
  return {
    runId: out.run.runId, experimentId: out.link?.experimentId, parentRunId: out.parent.runId, nodeId: out.nodeId, attempt: out.attempt,
    intervention: out.link?.intervention, status: out.run.status, answer: out.run.answer ?? null, correct: out.run.correct, parentCorrect: out.parent.correct,
    calls: { ...out.calls, upstream: sum(out.calls.recorded), liveTotal: sum(out.calls.live) }, modelsLoaded: out.modelsLoaded,
    roots: out.run.credit?.roots.map((r) => r.nodeId) ?? [],
  };
}

function formatFork(out: ForkOutcome): string {
  const verdict = (r: { status: string; answer?: string; correct: boolean }) => `${r.status}, answer ${r.answer ?? '-'}, ${r.correct ? 'correct' : 'wrong'}`;
  const kind = out.link?.intervention.kind ?? '';
  return [
    `Fork ${out.run.runId} of ${out.parent.runId} at ${out.nodeId}@${out.attempt} (${kind} intervention)`,
    `  parent: ${verdict(out.parent)}`,
    `  fork:   ${verdict(out.run)}${out.parent.correct !== out.run.correct ? `  <- ${out.run.correct ? 'flipped to success' : 'flipped to failure'}` : ''}`,
    `  model calls served from the recording (upstream, no model): ${sum(out.calls.recorded)} (${list(out.calls.recorded)})`,
    `  intervention: ${out.calls.intervened} call(s) answered by the given output`,
    `  live model calls (the node and what depends on it): ${sum(out.calls.live)} (${list(out.calls.live)}); models loaded: ${out.modelsLoaded}`,
    `  root failures: ${out.run.credit?.roots.map((r) => `${r.nodeId} (${r.errorCode ?? r.failureClass})`).join(', ') || 'none'}`,
    `Linked to its parent in experiment ${out.link?.experimentId}. Next: flowlab diff ${out.parent.runId} ${out.run.runId}; flowlab replay ${out.link?.experimentId}`,
    '',
  ].join('\n');
}
