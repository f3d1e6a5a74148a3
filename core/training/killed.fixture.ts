/**
 * A child process for the train loop's kill tests (core/training/resume.test.ts, scripts/soak.ts):
 * starts or resumes a train loop through the experiment service with a small fake trainer and a
 * seed-scripted provider (no model files), so a test can SIGKILL it at a named point
 * (`FLOWLAB_TEST_KILL_AT`, core/killPoint.ts) or at a random time and check what it left.
 *
 *   node --import tsx core/training/killed.fixture.ts start <db> <versionsDir> <loopId> [iterations] [msPerCall]
 *   node --import tsx core/training/killed.fixture.ts resume <db> <loopId>
 *
 * Prints the loop's report as one JSON line and exits 0 when the loop completed.
 * The fake model's file is its step count as text, written like the real trainer's (a temp file
 * `.<name>.<pid>.tmp` in the destination's folder, flushed, renamed), with `gguf-temp-written`
 * between the write and the rename, so a kill there leaves a temp file.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { resumeTrainLoop, startTrainLoop } from '../experiments/index.ts';
import { killPoint } from '../killPoint.ts';
import type { ModelConfig } from '../model/config.ts';
import type { GenerateRequest, GenerateResult, ModelProvider } from '../model/provider.ts';
import { openStore } from '../store/index.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import type { LoadOptions, OptimizerState, PolicySample, StepResult, TrainableModel, Trainer } from './port.ts';

export const WORKSHOP_FILE = 'examples/workshop-learn.yaml';

/** Steps taken so far, read from a fake model file ("steps <n> ref <file>"); 0 for a file that is not one (the base). */
export function stepsOf(file: string): number {
  const m = /^steps (\d+)/.exec(readFileSync(file, 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** The fake optimiser moment a fake model file was written with ("... moment <m>"); undefined for the base. */
export function momentOf(file: string): number | undefined {
  const m = / moment ([\d.e+-]+)$/.exec(readFileSync(file, 'utf8'));
  return m ? Number(m[1]) : undefined;
}

class FakeModel implements TrainableModel {
  readonly parameters = 1;
  private steps: number;
  /** A stand-in for Adam's moments: m <- m / 2 + 1 per step, kept in the optimiser state (zero at load). */
  private moment = 0;
  constructor(readonly path: string, private readonly reference: string) {
    this.steps = stepsOf(path);
  }
  async sftStep(): Promise<StepResult> {
    throw new Error('not used');
  }
  async policyStep(batch: readonly PolicySample[]): Promise<StepResult> {
    this.steps++;
    this.moment = this.moment / 2 + 1;
    return { loss: -0.01 * this.steps, kl: 0, tokens: batch.reduce((s, b) => s + b.completionTokens.length, 0), ms: 1 };
  }
  async greedy(): Promise<number[]> {
    return [];
  }
  async probabilities(): Promise<number[][]> {
    return [];
  }
  async writeGguf(out: string): Promise<void> {
    const tmp = path.join(path.dirname(out), `.${path.basename(out)}.${process.pid}.tmp`);
    const fd = openSync(tmp, 'wx');
    writeSync(fd, `steps ${this.steps} ref ${this.reference} moment ${this.moment}`);
    fsyncSync(fd);
    closeSync(fd);
    killPoint('gguf-temp-written');
    renameSync(tmp, out);
  }
  optimizerState(): OptimizerState {
    return { step: this.steps, tensors: [Float32Array.of(this.moment)] };
  }
  restoreOptimizerState(state: OptimizerState): void {
    this.moment = state.tensors[0]![0]!;
  }
  dispose(): void {}
}

export class FakeTrainer implements Trainer {
  async load(file: string, options: LoadOptions = {}): Promise<FakeModel> {
    return new FakeModel(file, options.reference ?? file);
  }
}

/** Answers by seed (so groups have reward spread), records token ids; waits `ms` per call (room for a random kill). */
export class SeedProvider implements ModelProvider {
  readonly name = 'seed';
  constructor(private readonly cfg: Pick<ModelConfig, 'models'>, private readonly ms = 0) {}
  async generate(req: GenerateRequest): Promise<GenerateResult> {
    if (!this.cfg.models[req.model]) throw new Error(`unknown ref ${req.model}`);
    if (this.ms) await new Promise((r) => setTimeout(r, this.ms));
    const planner = req.role === 'planner';
    const text = planner ? (req.seed % 3 === 0 ? 'Tim was happy.' : 'Tim went home.') : ['"search"', '"weather"', '"calculator"'][req.seed % 3]!;
    const res: GenerateResult = { text, tokens: { prompt: 3, completion: text.length }, ms: 1, seed: req.seed, model: path.basename(this.cfg.models[req.model]!) };
    if (req.recordTokens) {
      res.promptTokenIds = [1, planner ? 11 : 22, req.seed % 500];
      res.completionTokenIds = Array.from(text, (c) => c.charCodeAt(0));
    }
    return res;
  }
  modelsLoaded(): number {
    return 1;
  }
  async dispose(): Promise<void> {}
}

async function main(argv: string[]): Promise<number> {
  const [mode, db] = argv;
  const store = openStore(db!);
  const trainer = new FakeTrainer();
  const ms = Number(process.env['FLOWLAB_TEST_MS_PER_CALL'] ?? 0);
  const deps = { store, trainer, models: { create: async (cfg: ModelConfig) => new SeedProvider(cfg, ms) } };
  try {
    let done;
    if (mode === 'start') {
      const [, , versionsDir, loopId, iterations] = argv;
      const text = readFileSync(WORKSHOP_FILE, 'utf8');
      const { graph } = parseWorkflow(text, { tools: defaultTools() });
      const base = path.join(versionsDir!, 'base.gguf');
      mkdirSync(versionsDir!, { recursive: true });
      if (!existsSync(base)) writeFileSync(base, 'base');
      done = startTrainLoop({
        workflow: { graph, text, file: path.resolve(WORKSHOP_FILE) }, dataset: 'learn-team', split: 'train', heldoutSplit: 'heldout', heldout: 2, roles: ['planner', 'solver'],
        group: 4, iterations: Number(iterations ?? 4), tasksPerIteration: 2, lr: 3e-4, kl: 0.02, temperature: 1, maxGradNorm: 1, heldoutSamples: 2, heldoutTemperature: 1, seed: 7,
        versionsDir: versionsDir!, models: { models: { default: base }, roleModels: { planner: 'default', solver: 'default' }, gpu: false }, loopId: loopId!,
      }, deps).done;
    } else {
      const started = resumeTrainLoop({ id: argv[2]! }, deps);
      if (started.nothing) {
        process.stdout.write(JSON.stringify({ loopId: started.loop.id, nothing: true }) + '\n');
        return 0;
      }
      done = started.handle.done;
    }
    const report = await done;
    process.stdout.write(JSON.stringify({ loopId: report.loopId, iterations: report.iterations.map((m) => m.experimentId), versions: report.versions, cancelled: report.cancelled }) + '\n');
    return report.cancelled ? 130 : 0;
  } finally {
    store.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename ?? '')) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
