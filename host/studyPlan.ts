/**
 * A study plan read, validated and resolved for the study service (core/studies): its workflows
 * loaded, its models resolved, its zones checked, and the service's ports. Shared by both faces:
 * `flowlab study` (cli/commands/study.ts) and the lab's `startStudy` (host/studyJobs.ts), so a
 * plan means the same thing from the terminal and from the window.
 */
import os from 'node:os';
import path from 'node:path';
import { trainableRoles, ExperimentSpecError, type WorkflowSource } from '../core/experiments/index.ts';
import { isEndpointRef, type ModelConfig, type ModelPort } from '../core/model/index.ts';
import { computeWorkflowHash, type Store } from '../core/store/index.ts';
import { parseStudyPlan, planError, studyIdOf, type StudyDeps, type StudyPlan } from '../core/studies/index.ts';
import { DatasetError, datasetNames, getDataset, resolveSharedDir, type Dataset } from '../core/tasks/index.ts';
import type { ToolRegistry } from '../core/tools/index.ts';
import type { Trainer } from '../core/training/index.ts';
import { loadWorkflowFile } from '../core/workflow/index.ts';
import { resolveModels } from '../models/resolve.ts';

/** A plan path: `$FLOWLAB_SHARED` and `~` expanded, relative to the plan's folder `planDir`. */
export function planPath(p: string, planDir: string): string {
  const expanded = p.replace(/^\$FLOWLAB_SHARED(?=\/|$)/, resolveSharedDir()).replace(/^~(?=\/|$)/, os.homedir());
  return path.resolve(planDir, expanded);
}

/** A resolved plan: every workflow path and model file absolute. */
export interface LoadedStudyPlan {
  plan: StudyPlan;
  studyId: string;
  /** Each condition's workflow, by condition id. */
  workflows: Record<string, WorkflowSource>;
  /** Optional zones whose dataset this build lacks. */
  skipZones: Set<string>;
  notes: string[];
}

/** How a plan is resolved: `--model` / `--threads` overrides, the data folder, the tools workflows validate against, and a check of each workflow file before it is read. */
export interface ResolvePlanOptions {
  model?: string;
  threads?: number;
  dataDir?: string;
  tools: ToolRegistry;
  /** Throws for a workflow file the caller may not read (the lab confines them); `at` is its plan location. */
  checkWorkflow?: (file: string, at: string) => void;
}

/**
 * Validates and resolves the plan `text` read from `file` (its folder anchors relative paths):
 * workflows loaded, models resolved (`model` replaces every file, `threads` every thread
 * count), zones checked against the datasets of this build. Errors: StudyError BAD_PLAN
 * (located, every problem at once), SpecError of a workflow.
 */
export function resolveStudyPlan(text: string, file: string, o: ResolvePlanOptions): LoadedStudyPlan {
  const plan = parseStudyPlan(text, file);
  const dir = path.dirname(path.resolve(file));
  const problems: Array<{ path: Array<string | number>; message: string }> = [];
  const notes: string[] = [];
  const known = datasetNames().join(', ');
  const splitsOf = (name: string): string[] | undefined => {
    try {
      return getDataset(name, { ...(o.dataDir !== undefined && { dataDir: o.dataDir }) }).splits;
    } catch (err) {
      if (err instanceof DatasetError && err.code === 'UNKNOWN_DATASET') return undefined;
      throw err;
    }
  };
  const skipZones = new Set<string>();
  plan.zones.forEach((z, i) => {
    const splits = splitsOf(z.dataset);
    if (splits && !splits.includes(z.split)) problems.push({ path: ['zones', i, 'split'], message: `${z.dataset} has no split "${z.split}" (splits: ${splits.join(', ')})` });
    if (splits) return;
    if (z.optional) {
      skipZones.add(z.id);
      notes.push(`zone ${z.id} skipped: dataset "${z.dataset}" is not in this build (known: ${known})`);
    } else problems.push({ path: ['zones', i, 'dataset'], message: `unknown dataset "${z.dataset}" (known: ${known}); mark the zone "optional: true" to skip it where it is missing` });
  });
  if (plan.train) {
    const splits = splitsOf(plan.train.dataset);
    if (!splits) problems.push({ path: ['train', 'dataset'], message: `unknown dataset "${plan.train.dataset}" (known: ${known})` });
    else if (!splits.includes(plan.train.split)) problems.push({ path: ['train', 'split'], message: `${plan.train.dataset} has no split "${plan.train.split}" (splits: ${splits.join(', ')})` });
  }
  const workflows: Record<string, WorkflowSource> = {};
  plan.conditions.forEach((c, i) => {
    const wfFile = path.resolve(dir, c.workflow);
    o.checkWorkflow?.(wfFile, `conditions[${i}].workflow`);
    const workflow = loadWorkflowFile(wfFile, { tools: o.tools });
    workflows[c.id] = { ...workflow, file: wfFile };
    c.workflow = wfFile;
    if (c.train) {
      try {
        trainableRoles(workflows[c.id]!, c.train.roles);
      } catch (err) {
        if (err instanceof ExperimentSpecError) problems.push({ path: ['conditions', i, 'train', 'roles'], message: err.message });
        else throw err;
      }
    }
  });
  for (const m of plan.models) {
    // An endpoint (`openai:http://...#model`, docs/models.md) is a model like a file, never a path.
    const given = o.model ?? m.model;
    m.model = isEndpointRef(given) ? given : o.model ? path.resolve(o.model) : planPath(m.model, dir);
    if (o.threads !== undefined) m.threads = o.threads;
  }
  if (problems.length) throw planError(text, problems, file);
  const salt = plan.conditions.map((c) => computeWorkflowHash(workflows[c.id]!.text)).join(',');
  return { plan, studyId: studyIdOf(plan, salt), workflows, skipZones, notes };
}

/** The ports a face gives the study service. */
export interface StudyPorts {
  models: ModelPort;
  datasets: (name: string, dataDir?: string) => Dataset;
  tools: ToolRegistry;
  loadTrainer: () => Promise<Trainer>;
  /** The versions folder of the store; train loops of studies write under `<versionsDir>/studies`. */
  versionsDir: string;
  dataDir?: string;
  /** Wraps the synchronous model resolution (the CLI maps its errors to its own). */
  wrap?: <T>(f: () => T) => T;
}

/** The study service's deps for a resolved plan over `store` (the trainer loaded once, when a train loop is due). */
export function studyDepsOf(store: Store, loaded: LoadedStudyPlan, p: StudyPorts): StudyDeps {
  let trainer: Promise<Trainer> | undefined;
  const wrap = p.wrap ?? (<T>(f: () => T) => f());
  return {
    store,
    models: p.models,
    // Code datasets (MBPP, HumanEval) grade in the sandbox; code_runner is among the tools.
    datasets: p.datasets,
    tools: p.tools,
    trainer: () => (trainer ??= p.loadTrainer()),
    workflows: loaded.workflows,
    resolve: (conditionId, model, roleVersions): ModelConfig =>
      wrap(() => resolveModels(loaded.workflows[conditionId]!.graph, { default: model.model, threads: model.threads, ...(model.contextSize && { contextSize: model.contextSize }), ...(roleVersions && { roleVersions }) }, (id) => store.weights.find(id)).config),
    versionsDir: path.join(p.versionsDir, 'studies'),
    ...(p.dataDir !== undefined && { dataDir: p.dataDir }),
  };
}
