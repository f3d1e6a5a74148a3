/**
 * docs/training.md, run for real: the commands are read from the document's fenced blocks, so
 * the document and this test cannot drift apart.
 *
 * - ```` ```sh ```` blocks run as written, in document order, in one bash session in a scratch
 *   folder (with `examples/` and `scripts/` linked in, `flowlab` on PATH), with the tiny
 *   stories260K model as `$BASE_GGUF`. The one change: `--limit` is capped (4 tasks for
 *   `flowlab rollouts`, 2 for `flowlab run`) to keep the test short.
 * - ```` ```sh gpu ```` blocks need a GPU and are replaced where they stand: the training command
 *   runs with `--dry-run` (it reads and checks the exported file and prints its plan, importing
 *   no ML library), and the converter's `--outfile` is produced by `makeLoraAdapter` for the tiny
 *   model (a zero-B adapter: same outputs as the base, so the before/after runs must agree).
 * - The ```` ```sh setup ```` block names the variables the user sets; this test sets its own.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openStore, storedModels } from '../core/store/index.ts';
import { readGgufInfo } from '../models/llama/index.ts';
import { haveShared, shared, tinyModel } from '../test/fixtures.ts';

const repo = process.cwd();
const doc = readFileSync(path.join(repo, 'docs/training.md'), 'utf8');
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const tools = ['bash', 'jq', 'python3'].filter((t) => !has(t));
if (tools.length) console.log(`[trainingDoc.model.test] skipping the round trip: ${tools.join(', ')} not found`);

interface Block {
  tag: string;
  text: string;
}

/** Fenced blocks with their info string (`sh`, `sh gpu`, `sh setup`, ...). */
function blocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```([^\n]*)\n([\s\S]*?)^```\s*$/gm)].map((m) => ({ tag: m[1]!.trim(), text: m[2]! }));
}

/** Logical commands of a block: backslash-newline continuations joined, comments and blank lines dropped. */
function commands(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

function capLimit(command: string): string {
  const cap = command.startsWith('flowlab rollouts ') ? 4 : command.startsWith('flowlab run ') ? 2 : undefined;
  return cap === undefined ? command : command.replace(/--limit (\d+)/, (_, n: string) => `--limit ${Math.min(Number(n), cap)}`);
}

/** The value of `--flag value` in a command line (no quoting needed for the doc's file names). */
const flag = (command: string, name: string) => new RegExp(`${name} (\\S+)`).exec(command)?.[1];

describe('docs/training.md', () => {
  const all = blocks(doc);

  it('has the sh blocks of the round trip, GPU steps marked, and the setup variables this test provides', () => {
    const tags = all.map((b) => b.tag);
    expect(tags.filter((t) => t === 'sh').length).toBeGreaterThanOrEqual(4);
    expect(tags.filter((t) => t === 'sh gpu').length).toBeGreaterThanOrEqual(2);
    for (const b of all) expect(['sh', 'sh gpu', 'sh setup'], `unknown block tag "${b.tag}"`).toContain(b.tag);
    const setup = all.filter((b) => b.tag === 'sh setup').flatMap((b) => commands(b.text));
    expect(setup.map((l) => l.split('=')[0]).sort()).toEqual(['BASE_GGUF', 'HF_BASE_DIR', 'HF_MODEL']);
    const sh = all.filter((b) => b.tag === 'sh').flatMap((b) => commands(b.text)).join('\n');
    for (const c of ['flowlab rollouts', '--group 8', '--mode single:solver', 'flowlab export', '--advantage ladder', '--format conversational', '--role-lora solver=adapter.gguf', 'flowlab compare']) {
      expect(sh).toContain(c);
    }
  });

  it('the training script compiles (python3 -m py_compile)', () => {
    if (!has('python3')) return;
    const cache = mkdtempSync(path.join(tmpdir(), 'flowlab-pycache-'));
    const r = spawnSync('python3', ['-m', 'py_compile', 'scripts/train_lora_trl.py'], { env: { ...process.env, PYTHONPYCACHEPREFIX: cache }, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });

  it.skipIf(!haveShared || tools.length > 0)('every command runs with the tiny model up to the GPU step; the zero adapter runs end to end', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-training-doc-'));
    symlinkSync(path.join(repo, 'examples'), path.join(dir, 'examples'));
    symlinkSync(path.join(repo, 'scripts'), path.join(dir, 'scripts'));
    const bin = path.join(dir, '.bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'flowlab'), `#!/bin/sh\nexec "${process.execPath}" "${path.join(repo, 'bin/flowlab.js')}" "$@"\n`, { mode: 0o755 });
    const makeAdapter = path.join(dir, '.make-adapter.mts');
    writeFileSync(
      makeAdapter,
      `import { makeLoraAdapter, readLoraBase, writeGguf } from ${JSON.stringify(path.join(repo, 'models/gguf/index.ts'))};
const [base, out] = process.argv.slice(2);
await writeGguf(out!, makeLoraAdapter(await readLoraBase(base!), { rank: 4, init: 'zero', seed: 1, name: 'stand-in for convert_lora_to_gguf.py' }));
`,
    );

    // The script: sh blocks as written (limits capped), GPU blocks replaced by their checks.
    const trainOuts: string[] = [];
    const plans: string[] = [];
    let outfile: string | undefined;
    const lines = ['set -euo pipefail'];
    for (const b of all) {
      if (b.tag === 'sh') {
        lines.push(...commands(b.text).map(capLimit));
      } else if (b.tag === 'sh gpu') {
        for (const c of commands(b.text)) {
          if (/^python3? scripts\/train_lora_trl\.py /.test(c)) {
            const plan = `gpu-plan-${plans.length}.json`;
            plans.push(plan);
            trainOuts.push(flag(c, '--out')!);
            lines.push(`${c.replace(/^python3? /, 'python3 ')} --dry-run > ${plan}`);
          } else if (/^python3? \S*convert_lora_to_gguf\.py /.test(c)) {
            const loraDir = c.split(/\s+/)[2]!;
            expect(trainOuts, 'the converter reads a folder the training step wrote').toContain(loraDir);
            outfile = flag(c, '--outfile');
            expect(outfile).toBeDefined();
            lines.push(`"$FLOWLAB_TSX" "$MAKE_ADAPTER" "$BASE_GGUF" ${outfile}`);
          } else {
            throw new Error(`docs/training.md: a GPU step this test does not know how to stand in for: ${c}`);
          }
        }
      }
    }
    const { FLOWLAB_DB: _db, ...inherited } = process.env; // the doc uses the default database, flowlab.db in the data folder
    const env = {
      ...inherited,
      FLOWLAB_DATA: dir,
      PATH: `${bin}:${process.env.PATH}`,
      FLOWLAB_SHARED: shared,
      BASE_GGUF: tinyModel,
      HF_MODEL: 'test/stories260K-stand-in',
      HF_BASE_DIR: path.join(dir, 'hf-base'),
      FLOWLAB_TSX: path.join(repo, 'node_modules/.bin/tsx'),
      MAKE_ADAPTER: makeAdapter,
      PYTHONPYCACHEPREFIX: path.join(dir, '.pycache'),
    };
    const run = await promisify(execFile)('bash', ['-c', lines.join('\n')], { cwd: dir, env, timeout: 240_000, maxBuffer: 16 << 20 }).catch(
      (e: Error & { stdout?: string; stderr?: string }) => {
        throw new Error(`the doc's commands failed: ${e.message}\n--- script ---\n${lines.join('\n')}\n--- stderr ---\n${e.stderr}`);
      },
    );
    expect(run.stderr).not.toMatch(/\bError\b/);

    // 1. rollouts: 4 tasks x G=8, single:solver
    const rollouts = JSON.parse(readFileSync(path.join(dir, 'rollouts.json'), 'utf8'));
    expect(rollouts).toMatchObject({ groups: 4, trajectories: 32, group: 8, mode: 'single:solver' });
    // 2. export: the files the training step reads
    for (const f of ['manifest.json', 'solver.sft.jsonl', 'solver.grpo.jsonl']) expect(existsSync(path.join(dir, 'export', f)), f).toBe(true);
    // 3. the training script accepted the exported files (SFT on the assistant turn; KTO with both labels)
    const [sft, kto] = plans.map((p) => JSON.parse(readFileSync(path.join(dir, p), 'utf8')));
    expect(sft).toMatchObject({ method: 'sft', format: 'conversational', loss: 'assistant-turn', model: 'test/stories260K-stand-in', out: 'lora-solver' });
    expect(sft.records).toBeGreaterThan(0);
    expect(kto).toMatchObject({ method: 'kto', format: 'conversational' });
    expect(kto.desirable).toBeGreaterThan(0);
    expect(kto.undesirable).toBeGreaterThan(0);
    // 4. the stand-in adapter is a llama.cpp LoRA GGUF
    expect(await readGgufInfo(path.join(dir, outfile!))).toMatchObject({ architecture: 'llama' });

    // 5. before/after: same tasks and seeds; with a zero adapter the solver's answers are identical
    const before = JSON.parse(readFileSync(path.join(dir, 'before.json'), 'utf8'));
    const after = JSON.parse(readFileSync(path.join(dir, 'after.json'), 'utf8'));
    const store = openStore(path.join(dir, 'flowlab.db'), { mustExist: true });
    try {
      const exp = store.getExperiment(after.experimentId);
      const models = storedModels(exp)!;
      expect(models.roleModels.solver).toBe('role:solver');
      expect(models.models['role:solver']).toBe(tinyModel);
      expect(models.loras?.['role:solver']).toEqual([{ path: path.join(dir, 'adapter.gguf') }]);
      expect(Object.keys(models.loraFingerprints ?? {})).toEqual([path.join(dir, 'adapter.gguf')]);
      const a = store.listRuns(before.experimentId);
      const b = store.listRuns(after.experimentId);
      expect(a).toHaveLength(2);
      expect(b.map((r) => [r.taskId, r.seed, r.answer])).toEqual(a.map((r) => [r.taskId, r.seed, r.answer]));
      const call = store.getRunEvents(b[0]!.runId).find((e) => e.calls.length)!.calls[0]!;
      expect(call.modelRef).toBe('role:solver');
    } finally {
      store.close();
    }
    // 6. compare printed the paired statistics
    expect(run.stdout).toContain('2 paired task(s)');
    expect(run.stdout).toContain('p (sign test)');
    rmSync(dir, { recursive: true, force: true }); // kept when a step fails, to look at
  }, 300_000);
});
