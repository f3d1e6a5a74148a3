import Table from 'cli-table3';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { FAILURE_CLASSES, openStore, RUN_PAGE_MAX, RUN_SORT_KEYS, SEARCH_FIELDS, taskLabel, type ExperimentConfig, type ExperimentSummary, type RunHit, type RunQuery, type RunSearchResult } from '../../core/store/index.ts';
import { act, dbOption, intOption, UsageError, type CommandContext } from '../args.ts';
import type { Io } from '../io.ts';
import { tagFilter } from './annotate.ts';

interface LsOptions {
  db: string;
  json?: boolean;
  runs?: boolean;
  kind?: string;
  workflow?: string;
  dataset?: string;
  model?: string;
  status?: string;
  correct?: boolean;
  wrong?: boolean;
  failure?: (typeof FAILURE_CLASSES)[number];
  blamed?: string;
  group?: string;
  tag?: string;
  since?: number;
  until?: number;
  search?: string;
  in: RunQuery['field'];
  sort?: RunQuery['sort'];
  order?: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/** The flags that make `ls` list runs (they filter runs, not experiments). */
const RUN_FLAGS = ['correct', 'wrong', 'failure', 'blamed', 'group', 'tag', 'search'] as const;

/**
 * A date flag (`2026-12-03`, `2026-12-03T17:00`, any form `Date.parse` reads as ISO 8601) as epoch
 * ms; a bare date is midnight UTC. Errors: InvalidArgumentError naming the flag.
 */
export function parseDate(value: string, flag: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value) : Number.NaN;
  if (!Number.isFinite(ms)) throw new InvalidArgumentError(`--${flag} must be a date like 2026-12-03 or 2026-12-03T17:00Z, got "${value}"`);
  return ms;
}

/** `flowlab ls [experiment-id]`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('[experiment-id] [filters] [--search words] [--json] [--db file]')
    .description([
      '`ls` lists experiments (newest first); `ls <experiment-id>` lists its runs; any run filter',
      '(--correct, --wrong, --failure, --blamed, --group, --tag, --search) or --runs lists the runs of every',
      'experiment. --search finds words in the runs\' prompts, completions and node outputs (SQLite',
      'FTS5: case and accents ignored, "a phrase" in quotes, word* a prefix; --in narrows it).',
      'Tasks are numbered by task index, and task/rollout in a rollout group, as in every view.',
    ].join('\n'))
    .argument('[experiment-id]', 'list this experiment\'s runs')
    .addOption(dbOption())
    .option('--runs', 'list runs (of every experiment) even with no run filter')
    .option('--kind <kind>', 'experiment kind: run, blame-eval, rollouts, import, mass')
    .option('--workflow <text>', 'part of the workflow name (any case)')
    .option('--dataset <name>', 'dataset name')
    .option('--model <text>', 'part of a model file name the experiment used (any case)')
    .option('--status <status>', 'runs: completed | failed | cancelled; experiments: running | completed | interrupted | cancelled | failed')
    .option('--correct', 'runs graded correct')
    .option('--wrong', 'runs graded wrong (a failed run is also wrong)')
    .addOption(new Option('--failure <class>', 'runs with a node failure of this class').choices(FAILURE_CLASSES))
    .option('--blamed <role>', 'runs with a root failure blamed on this role')
    .option('--group <task-id>', 'one rollout group: the runs sampled for this dataset task id')
    .addOption(new Option('--tag <tag>', 'runs annotated with this tag (flowlab annotate; on the run or one of its nodes)').argParser(tagFilter))
    .addOption(new Option('--since <date>', 'started (runs) or created (experiments) on or after this date, UTC').argParser((v) => parseDate(v, 'since')))
    .addOption(new Option('--until <date>', 'started (runs) or created (experiments) before this date, UTC').argParser((v) => parseDate(v, 'until')))
    .option('--search <words>', 'words that must all occur in the run\'s text')
    .addOption(new Option('--in <field>', 'where --search looks').choices(SEARCH_FIELDS).default('any'))
    .addOption(new Option('--sort <key>', 'run order').choices(RUN_SORT_KEYS))
    .addOption(new Option('--order <dir>', 'ascending or descending (default: descending for started, else ascending)').choices(['asc', 'desc']))
    .addOption(intOption('--limit <n>', 'rows shown', { min: 1, max: RUN_PAGE_MAX, default: 50 }))
    .addOption(intOption('--offset <n>', 'rows skipped (the next page)', { default: 0 }))
    .option('--json', 'print one JSON object: {total, rows}')
    .action(act(ctx, (id: string | undefined, o: LsOptions) => lsCommand(id, o, ctx.io, cmd.helpInformation())));
}

async function lsCommand(experimentId: string | undefined, o: LsOptions, io: Io, usage: string): Promise<number> {
  if (o.correct && o.wrong) throw new UsageError('--correct and --wrong exclude each other', usage);
  const runMode = experimentId !== undefined || o.runs || RUN_FLAGS.some((f) => o[f] !== undefined);
  const store = openStore(o.db, { mustExist: true });
  try {
    if (!runMode) {
      const all = listExperiments(store.listExperiments(), o);
      const rows = all.slice(o.offset, o.offset + o.limit);
      io.stdout(o.json ? JSON.stringify({ total: all.length, rows: rows.map(({ workflowYaml: _y, config, ...e }) => ({ ...e, models: modelsOf(config) })) }) + '\n' : formatExperimentList(rows, all.length, o));
      return 0;
    }
    if (experimentId !== undefined) store.getExperiment(experimentId); // NOT_FOUND names it
    if (o.status !== undefined && !['completed', 'failed', 'cancelled'].includes(o.status)) {
      throw new UsageError(`--status for runs must be completed, failed or cancelled, got "${o.status}"`, usage);
    }
    const q: RunQuery = {
      ...(experimentId !== undefined && { experimentId }),
      ...(o.kind !== undefined && { kind: o.kind }),
      ...(o.workflow !== undefined && { workflow: o.workflow }),
      ...(o.dataset !== undefined && { dataset: o.dataset }),
      ...(o.model !== undefined && { model: o.model }),
      ...(o.status !== undefined && { status: o.status as RunQuery['status'] }),
      ...(o.correct && { correct: true }),
      ...(o.wrong && { correct: false }),
      ...(o.failure !== undefined && { failureClass: o.failure }),
      ...(o.blamed !== undefined && { blamed: o.blamed }),
      ...(o.group !== undefined && { group: o.group }),
      ...(o.tag !== undefined && { tag: o.tag }),
      ...(o.since !== undefined && { since: o.since }),
      ...(o.until !== undefined && { until: o.until }),
      ...(o.search !== undefined && { text: o.search, field: o.in }),
      sort: o.sort ?? (experimentId !== undefined ? 'task' : 'started'),
      ...(o.order !== undefined && { order: o.order }),
      limit: o.limit,
      offset: o.offset,
    };
    const result = store.searchRuns(q);
    io.stdout(o.json ? JSON.stringify(result) + '\n' : formatRunList(result, o, experimentId));
    return 0;
  } finally {
    store.close();
  }
}

/** Base names of the model files in an experiment's configuration (`config.models.models`). */
export function modelsOf(config: ExperimentConfig | null | undefined): string[] {
  const models = config?.models?.models;
  if (!models || typeof models !== 'object') return [];
  return [...new Set(Object.values(models).filter((v): v is string => typeof v === 'string').map((f) => f.split(/[\\/]/).pop()!))].sort();
}

/** The experiments `o`'s experiment filters keep, newest first. */
function listExperiments(all: ExperimentSummary[], o: LsOptions): ExperimentSummary[] {
  const has = (text: string, part: string) => text.toLowerCase().includes(part.toLowerCase());
  return all.filter(
    (e) =>
      (o.kind === undefined || e.kind === o.kind) &&
      (o.workflow === undefined || has(e.workflowName, o.workflow)) &&
      (o.dataset === undefined || e.dataset === o.dataset) &&
      (o.model === undefined || modelsOf(e.config).some((m) => has(m, o.model!))) &&
      (o.status === undefined || e.status === o.status) &&
      (o.since === undefined || e.createdAt >= o.since) &&
      (o.until === undefined || e.createdAt < o.until),
  );
}

const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
const pct = (x: number | null) => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);
const more = (shown: number, offset: number, total: number) =>
  offset + shown < total ? `  (next page: --offset ${offset + shown})` : '';

/** The experiments table of `flowlab ls`. */
export function formatExperimentList(rows: ExperimentSummary[], total: number, o: Pick<LsOptions, 'offset'>): string {
  const t = new Table({ head: ['experiment', 'kind', 'workflow', 'dataset', 'model', 'status', 'runs', 'correct', 'created (UTC)'], style: { head: [], border: [], compact: true } });
  for (const e of rows) {
    const kind = e.kind === 'blame-eval' ? 'blame-eval (SIMULATED faults)' : e.kind;
    t.push([e.id, kind, e.workflowName, `${e.dataset}/${e.split}`, modelsOf(e.config).join(', ') || '-', e.status, `${e.runsDone}/${e.tasksPlanned}`, pct(e.accuracy), iso(e.createdAt)]);
  }
  return `${t.toString()}\n${rows.length} of ${total} experiments${more(rows.length, o.offset, total)}. Runs of one: flowlab ls <experiment-id>\n`;
}

/** The runs table of `flowlab ls`: task index (task/rollout in a group), grade, status, blame, tokens, time. */
export function formatRunList(r: RunSearchResult, o: Pick<LsOptions, 'offset'>, experimentId?: string): string {
  const head = [...(experimentId ? [] : ['experiment']), 'task', 'run', 'status', 'grade', 'answer', 'failures', 'blamed', 'tags', 'tokens', 'ms', 'started (UTC)'];
  const t = new Table({ head, style: { head: [], border: [], compact: true } });
  for (const h of r.rows) t.push([...(experimentId ? [] : [h.experimentId]), taskLabel(h), h.runId, h.status, grade(h), clip(h.answer ?? '-'), failures(h), h.blamed.join(', ') || '-', h.tags.join(', ') || '-', String(h.promptTokens + h.completionTokens), String(h.endedAt - h.startedAt), iso(h.startedAt)]);
  const what = experimentId ? `runs of ${experimentId}` : 'runs';
  return `${t.toString()}\n${r.rows.length} of ${r.total} ${what}${more(r.rows.length, o.offset, r.total)}. A run's trace: flowlab show <run>\n`;
}

/** "correct" / "wrong" as `flowlab show` says them; SIMULATED faults marked. */
const grade = (h: RunHit) => `${h.correct ? 'correct' : 'wrong'}${h.simulated ? ' (SIMULATED faults)' : ''}`;
const failures = (h: RunHit) => Object.entries(h.failures).filter(([, n]) => n).map(([k, n]) => `${k} ${n}`).join(', ') || '-';
const clip = (s: string, n = 24) => (s.length > n ? `${s.slice(0, n)}…` : s);
