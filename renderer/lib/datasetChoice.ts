/**
 * The dataset the Run form starts with for a workflow just opened (issue 29, "the same defaults
 * as the CLI": the dataset a workflow names or was last run with, not the first in the list):
 * the dataset of the newest stored experiment of that workflow, else the first `--dataset <name>`
 * in the workflow's comments (the examples' "Run it:" lines), when the lab lists it. Pure.
 */

/** The dataset name for `workflowName` (text `text`), or undefined to keep the form's. */
export function datasetForWorkflow(
  text: string,
  workflowName: string | null | undefined,
  experiments: ReadonlyArray<{ workflowName: string; dataset: string; createdAt: number }>,
  datasets: ReadonlyArray<{ name: string }>,
): string | undefined {
  const known = new Set(datasets.map((d) => d.name));
  if (workflowName) {
    const last = experiments.filter((e) => e.workflowName === workflowName && known.has(e.dataset)).reduce<(typeof experiments)[number] | undefined>((a, e) => (!a || e.createdAt > a.createdAt ? e : a), undefined);
    if (last) return last.dataset;
  }
  for (const line of text.split('\n')) {
    if (!line.trimStart().startsWith('#')) continue;
    const m = /--dataset[= ]+([A-Za-z0-9_.:-]+)/.exec(line);
    if (m && known.has(m[1]!)) return m[1];
  }
  return undefined;
}

/**
 * The dataset the Learning form starts with for a workflow just opened (issue 29 part 4; `flowlab
 * train-loop` takes `--dataset`, which the examples' comments name on their `train-loop` line):
 * the first `--dataset <name>` on a comment line that says `train-loop`, when the lab lists it;
 * else the Run form's choice ({@link datasetForWorkflow}) when that dataset has a `split` split
 * (a train loop samples its tasks from it); else undefined, to keep the form's. Pure.
 */
export function trainDatasetForWorkflow(
  text: string,
  workflowName: string | null | undefined,
  experiments: ReadonlyArray<{ workflowName: string; dataset: string; createdAt: number }>,
  datasets: ReadonlyArray<{ name: string; splits: readonly string[] }>,
  split: string,
): string | undefined {
  const known = new Set(datasets.map((d) => d.name));
  for (const line of text.split('\n')) {
    if (!line.trimStart().startsWith('#') || !/\btrain-loop\b/.test(line)) continue;
    const m = /--dataset[= ]+([A-Za-z0-9_.:-]+)/.exec(line);
    if (m && known.has(m[1]!)) return m[1];
  }
  const run = datasetForWorkflow(text, workflowName, experiments, datasets);
  return run !== undefined && datasets.find((d) => d.name === run)?.splits.includes(split) ? run : undefined;
}
