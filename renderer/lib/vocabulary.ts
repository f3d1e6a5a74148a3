/**
 * The CLI's words in the window (issue 29 part 4, "one vocabulary with the CLI"): every view names
 * an experiment's kind, a run's task, its outcome and its models as `flowlab ls` and `flowlab show`
 * print them. Pure; the views import these instead of spelling their own.
 * - kind: `blame-eval (SIMULATED faults)` for a blame-eval (cli/commands/ls.ts, showExperiment.ts);
 * - task: the task index, `task/rollout` in a rollout group (core/store `taskLabel`, `flowlab ls`);
 * - outcome: the run's status (`completed | failed | cancelled`: failed = the run failed, a node's
 *   failure it could not recover from) and its grade (`correct | wrong`: a failed run is also
 *   graded wrong, as `flowlab show <run>` prints `failed … wrong` and `ls --wrong` finds it);
 * - models: the model files' base names, sorted and distinct (cli `modelsOf`), `-` when none.
 */
import type { RunHit } from '../../core/api/client.ts';

/** A run's task as every view and `flowlab ls` name it: its task index, or `task/rollout` in a rollout group. */
export function taskLabel(hit: Pick<RunHit, 'taskIndex' | 'rollout'>): string {
  return hit.rollout ? `${hit.rollout.task}/${hit.rollout.index}` : String(hit.taskIndex);
}

/** An experiment kind as `flowlab ls` and `flowlab show <experiment-id>` print it. */
export function kindLabel(kind: string): string {
  return kind === 'blame-eval' ? 'blame-eval (SIMULATED faults)' : kind;
}

/**
 * The rollout group size G of a stored experiment: `config.rollouts.group` for kind `rollouts`
 * (as the store's run search reads it), else 0 (no groups).
 */
export function rolloutGroupOf(e: { kind: string; config?: unknown } | undefined): number {
  if (e?.kind !== 'rollouts') return 0;
  const field = (x: unknown, k: string): unknown => (typeof x === 'object' && x !== null ? (x as Record<string, unknown>)[k] : undefined);
  const g = field(field(e.config, 'rollouts'), 'group');
  return typeof g === 'number' && Number.isInteger(g) && g > 0 ? g : 0;
}

/** A run's task as `flowlab ls` names it: `taskIndex`, or `task/rollout` (⌊taskIndex / G⌋ / taskIndex mod G) in a group of G > 0. */
export function runTaskLabel(taskIndex: number, group: number): string {
  return taskLabel(group > 0 ? { taskIndex, rollout: { task: Math.floor(taskIndex / group), index: taskIndex % group } } : { taskIndex });
}

/** A run's grade as `flowlab show` prints it. */
export function gradeWord(correct: boolean): 'correct' | 'wrong' {
  return correct ? 'correct' : 'wrong';
}

/** A run's outcome in `flowlab show`'s words and order: `<status> · <grade>`, e.g. `failed · wrong`. */
export function outcomeText(run: { status: string; correct: boolean }): string {
  return `${run.status} · ${gradeWord(run.correct)}`;
}

/** The models line of an experiment as `flowlab ls` and `show` print it: base names joined by `, `, `-` when none is recorded. */
export function modelsLabel(models: readonly string[] | undefined): string {
  return models?.length ? models.join(', ') : '-';
}

/**
 * What an experiment ran, in the words of `flowlab show <experiment-id>`'s first lines:
 * `<kind> · workflow <name> · dataset <dataset>/<split> · models <files>`.
 */
export function experimentContext(e: { kind: string; workflowName: string; dataset: string; split: string; models?: readonly string[] }): string {
  return `${kindLabel(e.kind)} · workflow ${e.workflowName} · dataset ${e.dataset}/${e.split} · models ${modelsLabel(e.models)}`;
}

/**
 * The model files of a MASS evolution (or any job whose experiments are `<id>.<step>`): the
 * union of its step experiments' models, sorted (the experiments `flowlab evolve` checks on
 * resume, cli/commands/evolve.ts `checkModelFiles`). Empty while none is listed.
 */
export function modelsUnder(id: string, experiments: ReadonlyArray<{ id: string; models?: readonly string[] }>): string[] {
  return [...new Set(experiments.filter((e) => e.id.startsWith(`${id}.`)).flatMap((e) => e.models ?? []))].sort();
}

/**
 * The model files of a MASS outer loop (`flowlab rank` / `rsi`): the union of the models of its
 * champion runs' experiments, `<prefix>-t<task>-r<run>` for each ranking's step prefix
 * (core/mass/outer.ts), sorted. Judge experiments record no model file of their own and are not
 * read. Empty while none is listed.
 */
export function modelsOfOuterLoop(prefixes: readonly string[], experiments: ReadonlyArray<{ id: string; models?: readonly string[] }>): string[] {
  const runOf = (id: string) => prefixes.some((p) => id.startsWith(`${p}-t`) && /^-t\d+-r\d+$/.test(id.slice(p.length)));
  return [...new Set(experiments.filter((e) => runOf(e.id)).flatMap((e) => e.models ?? []))].sort();
}
