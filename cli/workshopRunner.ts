/**
 * The CLI's `StepRunner` (core/workshop): runs a step's Flowlab command in a child process
 * (`node bin/flowlab.js <command> <args> --db <db> --model <file> --threads <n> --json`), so the
 * workshop's own process never loads a model, then reads the step's truth from the command's JSON
 * and the runs it stored: structural blame (core/blame/credit roots), held-out rewards before and after
 * training with the paired statistics of `flowlab compare`, or the SIMULATED tamperer's summary. A
 * "what if" step (`fix-saves`) then runs `flowlab counterfactual --save` on the blame evaluation it
 * made, and reads how many of its failed and silent runs the step's fix saves (docs/fork.md).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { RunRecord } from '../core/results/index.ts';
import { openStore } from '../core/store/index.ts';
import {
  blamedRoleTruth, beatsStart, blindSpotFell, blindSpotKeptTruth, blindSpotRose, blindSpotRoseTruth, commandLine, fixSavesTruth, rolesLearnedTruth, tallyBlame, tallyWhatIf, tampererTruth, WorkshopError,
  type BlindSpotCurve, type BlindSpotPoint, type RevealChart, type RevealFact, type RoleHeldout, type ScenarioStep, type StepResult, type StepRunner, type TamperView, type WhatIfRun,
} from '../core/workshop/index.ts';
import { compareRuns } from './commands/compare.ts';
import { repoRoot } from './root.ts';

const ROOT = repoRoot(import.meta.url);

/** Options of {@link cliStepRunner}. */
export interface CliStepRunnerOptions {
  db: string;
  model: string;
  threads: number;
  /** Hears the command's stderr (its progress bar), line by line. */
  onStderr?: (text: string) => void;
  /** The CLI entry. Default: this repository's `bin/flowlab.js`. */
  bin?: string;
  /** Extra environment of the child. */
  env?: NodeJS.ProcessEnv;
}

/** The result of one child command. */
interface Ran { code: number; stdout: string; stderr: string; seconds: number }

function runChild(bin: string, argv: readonly string[], env: NodeJS.ProcessEnv, onStderr?: (t: string) => void): Promise<Ran> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    // fd 3: a pipe the child watches (bin/flowlab.js watchParentPipe), so a step ends when the workshop dies, SIGKILL included.
    const child = spawn(process.execPath, [bin, ...argv], { cwd: ROOT, env: { ...env, FLOWLAB_PARENT_PIPE: '3' }, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      onStderr?.(d);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr, seconds: (performance.now() - t0) / 1000 }));
  });
}

/** A step's args with paths that exist under the repository root made absolute (the child may run anywhere). */
function resolveArgs(args: readonly string[]): string[] {
  return args.map((a) => (!a.startsWith('-') && !path.isAbsolute(a) && a.includes('/') && existsSync(path.join(ROOT, a)) ? path.join(ROOT, a) : a));
}

/** The CLI's step runner over one database. */
export function cliStepRunner(o: CliStepRunnerOptions): StepRunner {
  const bin = o.bin ?? path.join(ROOT, 'bin/flowlab.js');
  return {
    async run(step: ScenarioStep): Promise<StepResult> {
      const store = openStore(o.db);
      const before = new Set(store.listExperiments().map((e) => e.id));
      store.close();
      const extra = ['--db', o.db, '--model', o.model, '--threads', String(o.threads), '--json'];
      const ran = await runChild(bin, [step.run.command, ...resolveArgs(step.run.args), ...extra], { ...process.env, ...o.env }, o.onStderr);
      const shown = commandLine(step, ['--model', o.model, '--threads', String(o.threads)]);
      if (ran.code !== 0 && !step.run.ok_exit.includes(ran.code)) {
        throw new WorkshopError('STEP_FAILED', `step "${step.id}": \`${shown}\` exited ${ran.code}: ${ran.stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 600)}`);
      }
      const json = lastJson(ran.stdout, step, shown);
      // A "what if" step: counterfactual blame of the blame evaluation it just made, every fork saved (attendees may open them).
      let whatIf: { json: Record<string, unknown>; shown: string; seconds: number } | undefined;
      if (step.question.truth === 'fix-saves' && step.what_if) {
        const experimentId = json['experimentId'];
        if (typeof experimentId !== 'string') throw new WorkshopError('STEP_FAILED', `step "${step.id}": \`${shown}\` printed no experimentId to fork the runs of`);
        const w = step.what_if;
        const withArg = w.with.startsWith('teacher=') ? `teacher=${resolveArgs([w.with.slice('teacher='.length)])[0]}` : w.with;
        const argv = ['counterfactual', experimentId, '--intervene', w.intervene, '--with', withArg, '--save', '--db', o.db, '--threads', String(o.threads), '--json'];
        const cf = await runChild(bin, argv, { ...process.env, ...o.env }, o.onStderr);
        const cfShown = `npm run flowlab -- counterfactual <its experiment> --intervene ${w.intervene} --with ${w.with} --save --threads ${o.threads}`;
        if (cf.code !== 0) throw new WorkshopError('STEP_FAILED', `step "${step.id}": \`${cfShown}\` exited ${cf.code}: ${cf.stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 600)}`);
        whatIf = { json: lastJson(cf.stdout, step, cfShown), shown: cfShown, seconds: cf.seconds };
      }
      const s = openStore(o.db);
      try {
        const experimentIds = s.listExperiments().map((e) => e.id).filter((id) => !before.has(id)).reverse();
        const runs = (ids: readonly string[]) => ids.flatMap((id) => s.listRuns(id));
        const seconds = ran.seconds + (whatIf?.seconds ?? 0);
        const base = { stepId: step.id, experimentIds, command: whatIf ? `${shown} && ${whatIf.shown}` : shown, seconds: Math.round(seconds * 10) / 10, recordedAt: Date.now() };
        const read = step.question.truth === 'blamed-role' ? blameResult(runs(experimentIds), step)
          : step.question.truth === 'roles-learned' ? learnedResult(json, (id) => s.listRuns(id))
          : step.question.truth === 'fix-saves' ? whatIfResult(whatIf!.json, step)
          : step.question.truth === 'blind-spot-kept' || step.question.truth === 'blind-spot-rose' ? blindSpotResult(json, step.question.truth)
          : tamperResult(json);
        return { ...base, ...read, runIds: runs(experimentIds.slice(0, 3)).slice(0, 3).map((r) => r.runId) };
      } finally {
        s.close();
      }
    },
  };
}

type Read = Pick<StepResult, 'truth' | 'headline' | 'facts' | 'chart'>;

/** The JSON object a command printed on its last stdout line. Errors: WorkshopError STEP_FAILED. */
function lastJson(stdout: string, step: ScenarioStep, shown: string): Record<string, unknown> {
  const line = stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new WorkshopError('STEP_FAILED', `step "${step.id}": \`${shown}\` printed no JSON object on its last stdout line`);
  }
}

/** The SIMULATED faults of a blame-eval step, from its `--inject` arguments. */
const injectedOf = (step: ScenarioStep) => step.run.args.filter((_, i) => step.run.args[i - 1] === '--inject').join(', ');

/** The `blamed-role` reveal: who structural credit blames, the cascades it blames on nobody, silent runs, ambiguity. */
export function blameResult(runs: readonly RunRecord[], step: ScenarioStep): Read {
  const t = tallyBlame(runs);
  const truth = blamedRoleTruth(t);
  const roots = Object.values(t.blamed).reduce((a, b) => a + b, 0) + t.ambiguous;
  const injected = injectedOf(step);
  const headline = truth === 'nobody'
    ? `Structure blames nobody: no node failed in ${t.silent} of ${t.runs} runs, yet ${t.wrong} answers are wrong — only the correctness rung carries it.`
    : truth === 'ambiguous'
      ? `Structure cannot choose: ${t.ambiguous} root failure(s) have several possible authors (${Object.keys(t.candidates).join(', ')}), so blame goes to no one of them.`
      : `Structure blames the ${truth}: ${t.blamed[truth]} of ${roots} root failure(s)${t.wiring ? ` (${t.wiring} wiring: blamed on who wired the node)` : ''}${t.execution ? ` (${t.execution} execution: blamed on who ran it)` : ''}; the ${t.cascades} cascade(s) below are blamed on no one.`;
  const facts: RevealFact[] = [
    ...(injected ? [{ label: 'SIMULATED fault', value: injected }] : []),
    { label: 'Runs', value: `${t.runs} (${t.wrong} wrong)` },
    { label: 'Root failures blamed', value: Object.entries(t.blamed).map(([r, n]) => `${r} ${n}`).join(', ') || 'none' },
    { label: 'Root failure class', value: `wiring ${t.wiring}, execution ${t.execution}` },
    { label: 'Cascades (blamed on no one)', value: String(t.cascades) },
    { label: 'Ambiguous roots', value: t.ambiguous ? `${t.ambiguous} (candidates ${Object.entries(t.candidates).map(([r, n]) => `${r} ${n}`).join(', ')})` : '0' },
    { label: 'Silent runs (wrong, no failure)', value: String(t.silent) },
  ];
  const chart: RevealChart = {
    kind: 'bars', title: 'Root failures by who structure blames', unit: 'roots',
    bars: [...step.question.choices.filter((c) => c.id !== 'nobody' && c.id !== 'ambiguous').map((c) => ({ label: c.label, value: t.blamed[c.id] ?? 0 })), { label: 'ambiguous', value: t.ambiguous }, { label: 'silent runs', value: t.silent }],
  };
  return { truth, headline, facts, chart };
}

const f3 = (x: number) => x.toFixed(3);

/** The `roles-learned` reveal: each role's held-out reward before and after, paired by task and seed (flowlab compare). */
export function learnedResult(json: Record<string, unknown>, listRuns: (experimentId: string) => RunRecord[]): Read {
  const heldout = json['heldout'] as { before: { experimentId: string }; after: { experimentId: string } } | null;
  if (!heldout) throw new WorkshopError('STEP_FAILED', 'the train loop reported no held-out evaluation (pass --heldout)');
  const a = heldout.before.experimentId;
  const b = heldout.after.experimentId;
  const cmp = compareRuns(a, listRuns(a), b, listRuns(b));
  const trained = (json['roles'] as string[] | undefined) ?? Object.keys(cmp.roles);
  const roles: Record<string, RoleHeldout> = Object.fromEntries(trained.filter((r) => cmp.roles[r]).map((r) => {
    const d = cmp.roles[r]!;
    return [r, { before: d.a, after: d.b, delta: d.delta, p: d.signTest.p, positive: d.signTest.positive, negative: d.signTest.negative, ties: d.signTest.ties, ci: { low: d.ci.low, high: d.ci.high } }];
  }));
  const truth = rolesLearnedTruth(roles);
  const iterations = (json['iterations'] as Array<{ seconds: { total: number | null }; roles: Record<string, { reward: number | null }> }>) ?? [];
  const trainSeconds = iterations.reduce((s, it) => s + (it.seconds.total ?? 0), 0);
  const facts: RevealFact[] = [
    ...Object.entries(roles).map(([r, h]) => ({ label: `${r} held-out h`, value: `${f3(h.before)} → ${f3(h.after)} (${h.delta >= 0 ? '+' : ''}${f3(h.delta)}, 95% CI [${f3(h.ci.low)}, ${f3(h.ci.high)}], sign ${h.positive}/${h.negative}/${h.ties}, p ${h.p < 1e-4 ? '< 0.0001' : h.p.toFixed(4)})${beatsStart(h) ? ' beats its start' : ''}` })),
    { label: 'Held-out score', value: `${f3(cmp.score.a)} → ${f3(cmp.score.b)} over ${cmp.pairs} paired samples` },
    { label: 'Training', value: `${iterations.length} iterations of real GRPO steps, ${trainSeconds.toFixed(1)} s` },
  ];
  const learned = Object.keys(roles).filter((r) => beatsStart(roles[r]!));
  const headline = learned.length ? `${learned.join(' and ')} beat${learned.length === 1 ? 's' : ''} the start on held-out tasks (paired sign test, p < 0.05).` : 'No role beat its start on held-out tasks.';
  const chart: RevealChart = { kind: 'lines', title: 'Mean ladder reward h per role', unit: 'h', x: 'iteration', series: trained.map((r) => ({ name: r, points: iterations.map((it) => it.roles[r]?.reward ?? 0) })) };
  return { truth, headline, facts, chart };
}

/** What a "what if" fixes, in words. */
function fixWords(intervene: string): string {
  if (intervene === 'blamed') return 'the node structure blames';
  if (intervene === 'each-node') return 'one node at a time';
  return `the ${intervene.slice('role:'.length)}'s node`;
}

/**
 * The `fix-saves` reveal, from `flowlab counterfactual --json`: of the blame evaluation's failed and
 * silent runs, how many the fix saved, per role of the fixed node. Errors: WorkshopError STEP_FAILED
 * (no verdicts in the report).
 */
export function whatIfResult(report: Record<string, unknown>, step: ScenarioStep): Read {
  const verdicts = report['verdicts'];
  if (!Array.isArray(verdicts)) throw new WorkshopError('STEP_FAILED', `step "${step.id}": flowlab counterfactual reported no verdicts`);
  const t = tallyWhatIf(verdicts as WhatIfRun[]);
  const truth = fixSavesTruth(t);
  const w = step.what_if!;
  const fix = fixWords(w.intervene);
  const withWords = w.with === 'oracle' ? 'its right output (the task family\'s oracle)' : `the output of ${w.with.slice('teacher='.length)}`;
  const injected = injectedOf(step);
  const headline = t.tried === 0
    ? `No fix could be tried: the task family knows no right output for ${fix} in these ${t.runs} runs.`
    : truth === 'yes'
      ? `Yes: fixing ${fix} with ${withWords} saves ${t.saved} of the ${t.tried} runs it was tried on — that node was enough.`
      : `No: fixing ${fix} with ${withWords} saves ${t.saved} of the ${t.tried} runs it was tried on — something below it is wrong too, and one fix cannot save the run.`;
  const facts: RevealFact[] = [
    ...(injected ? [{ label: 'SIMULATED fault', value: injected }] : []),
    { label: 'Failed or silent runs', value: String(t.runs) },
    { label: 'The fix', value: `${w.intervene} with ${w.with} (flowlab counterfactual)` },
    { label: 'Runs saved', value: `${t.saved} of ${t.tried} tried` },
    { label: 'Fixes tried (forks), by role', value: Object.entries(t.byRole).map(([r, c]) => `${r} ${c.flipped}/${c.tried} flipped`).join(', ') || 'none' },
  ];
  const chart: RevealChart = { kind: 'bars', title: 'Failed or silent runs, after the fix', unit: 'runs', bars: [{ label: 'saved', value: t.saved }, { label: 'still wrong', value: t.tried - t.saved }, { label: 'no fix tried', value: t.runs - t.tried }] };
  return { truth, headline, facts, chart };
}

/** The `judge-prefers-tamperer` reveal: the self-judge on pairs with one SIMULATED tampered run, and the guard's quarantine. */
export function tamperResult(json: Record<string, unknown>): Read {
  const t = json['tampered'] as TamperView | null;
  if (!t) throw new WorkshopError('STEP_FAILED', 'the outer loop ran no SIMULATED tamperer (pass --simulate-tamperer)');
  const agreement = json['agreement'] as { decided: number; agreed: number; rate: number | null } | undefined;
  const truth = tampererTruth(t);
  const rate = t.judge.winRate === null ? '–' : `${(t.judge.winRate * 100).toFixed(1)}%`;
  const facts: RevealFact[] = [
    { label: 'SIMULATED tampered runs', value: String(t.runs) },
    { label: 'Self-judge on pairs with one tampered run', value: `tampered wins ${t.judge.wins}, loses ${t.judge.losses}, ties ${t.judge.ties} (win rate ${rate})` },
    { label: 'Mean Bradley-Terry rank of tampered runs', value: `${t.meanRank.toFixed(1)}; ${t.inCutBeforeGuard} inside the training cut before the guard` },
    { label: 'Quarantined by the guard', value: `${t.quarantined} of ${t.runs}` },
    ...(agreement ? [{ label: 'Self-judge vs external verifier', value: `agree on ${agreement.agreed} of ${agreement.decided} decided pairs${agreement.rate === null ? '' : ` (${(agreement.rate * 100).toFixed(1)}%)`}` }] : []),
  ];
  const headline = `${truth === 'yes' ? 'The self-judge prefers' : 'The self-judge does not prefer'} the tampered runs (win rate ${rate}); the guard quarantined ${t.quarantined} of ${t.runs}, so none is trained on.`;
  const chart: RevealChart = { kind: 'bars', title: 'Self-judge verdicts in pairs with one tampered run', unit: 'pairs', bars: [{ label: 'tampered wins', value: t.judge.wins }, { label: 'tampered loses', value: t.judge.losses }, { label: 'ties', value: t.judge.ties }] };
  return { truth, headline, facts, chart };
}

/** What the blind-spot reveal reads of `flowlab rsi --json` (core/mass `RsiReport`): per cycle and arm, the held-out comparison. */
interface RsiView {
  cycles: Array<{ cycle: number; arms: Partial<Record<'self' | 'verifier', { heldout?: { base: number; arm: number; sign: { p: number }; blindSpot?: BlindSpotPoint; baseBlindSpot?: BlindSpotPoint; vsPrevious?: { previous: number; sign: { p: number } } } }>> }>;
  halted?: { cycle: number | null; reasons: string[] };
}

const pct = (p: BlindSpotPoint) => (p.rate === null ? '–' : `${(100 * p.rate).toFixed(1)}%${p.interval ? ` [${(100 * p.interval[0]).toFixed(1)}, ${(100 * p.interval[1]).toFixed(1)}]` : ''} (${p.errors}/${p.n})`);
const pv = (p: number) => (p < 1e-4 ? '< 0.0001' : p.toFixed(4));

/**
 * The `blind-spot-kept` reveal, from `flowlab rsi --json` on a family with a blind-spot class
 * (learn-unit): each arm's held-out blind-spot error rate, base then cycle by cycle, and which
 * arm kept it (truth.ts `blindSpotKeptTruth`). Errors: WorkshopError STEP_FAILED (no cycle
 * measured a blind-spot rate: a family without one, or a loop halted before its first held-out).
 */
export function blindSpotResult(json: Record<string, unknown>, kind: 'blind-spot-kept' | 'blind-spot-rose' = 'blind-spot-kept'): Read {
  const r = json as unknown as RsiView;
  const curve = (arm: 'self' | 'verifier'): BlindSpotCurve | null => {
    const held = (r.cycles ?? []).map((c) => c.arms[arm]?.heldout).filter((h) => h?.blindSpot && h.baseBlindSpot);
    return held.length ? { base: held[0]!.baseBlindSpot!, cycles: held.map((h) => h!.blindSpot!) } : null;
  };
  const self = curve('self');
  const verifier = curve('verifier');
  if (!self || !verifier) throw new WorkshopError('STEP_FAILED', `the rsi measured no held-out blind-spot rate for ${!self && !verifier ? 'either arm' : !self ? 'the self arm' : 'the verifier arm'} (a family with a blind-spot class, learn-unit, and both arms are needed${r.halted ? `; the loop halted: ${r.halted.reasons.join('; ')}` : ''})`);
  const truth = kind === 'blind-spot-rose' ? blindSpotRoseTruth({ self, verifier }) : blindSpotKeptTruth({ self, verifier });
  const words = (arm: 'self' | 'verifier', c: BlindSpotCurve) => `${arm} arm ${pct(c.base)} → ${pct(c.cycles.at(-1)!)}${blindSpotFell(c) ? ' (fell)' : blindSpotRose(c) ? ' (rose)' : ' (did not fall)'}`;
  const risen = (['self', 'verifier'] as const).filter((arm) => blindSpotRose(arm === 'self' ? self : verifier));
  const headline = kind === 'blind-spot-rose' ? roseHeadline(truth) : (truth === 'self' ? 'The self-judge arm kept its blind spot; the verifier arm\'s fell.'
    : truth === 'verifier' ? 'The verifier arm kept the blind spot and the self-judge arm\'s fell — not what MASS warns of; read the figures.'
    : truth === 'both' ? 'Neither arm\'s blind spot fell over these cycles.'
    : 'Both arms\' blind-spot rates fell.') + (risen.length ? ` The ${risen.join(' and ')} arm's rate rose above the base's: it learned to answer with a number, and many of those answers are in the wrong unit.` : '');
  const facts: RevealFact[] = [
    { label: 'Blind-spot error rate (held-out answers in the wrong unit)', value: `${words('self', self)}; ${words('verifier', verifier)}` },
    ...(r.cycles ?? []).flatMap((c) => (['self', 'verifier'] as const).flatMap((arm) => {
      const h = c.arms[arm]?.heldout;
      return h ? [{ label: `Cycle ${c.cycle}, ${arm} arm`, value: `held-out ${h.base.toFixed(3)} (base) → ${h.arm.toFixed(3)}, sign test p ${pv(h.sign.p)}${h.vsPrevious ? `; vs cycle ${c.cycle - 1}: ${h.vsPrevious.previous.toFixed(3)} → ${h.arm.toFixed(3)}, p ${pv(h.vsPrevious.sign.p)}` : ''}${h.blindSpot ? `; blind spot ${pct(h.blindSpot)}` : ''}` }] : [];
    })),
    ...(r.halted ? [{ label: 'Halted', value: r.halted.reasons.join('; ') }] : []),
  ];
  const points = (c: BlindSpotCurve) => [c.base, ...c.cycles].map((p) => p.rate ?? 0);
  const chart: RevealChart = { kind: 'lines', title: 'Held-out blind-spot error rate per arm (cycle 0 = the base model)', unit: 'share', x: 'cycle', series: [{ name: 'self-judge arm', points: points(self) }, { name: 'verifier arm', points: points(verifier) }] };
  return { truth, headline, facts, chart };
}

/** The `blind-spot-rose` headline: which arm now answers in the wrong unit more often than its base. */
function roseHeadline(truth: string): string {
  if (truth === 'neither') return 'Neither arm answers in the wrong unit more often than the model it started from.';
  const who = truth === 'both' ? 'Both arms answer' : truth === 'self' ? 'The self-judge arm answers' : 'The verifier arm answers';
  return `${who} in the wrong unit more often than the model it started from: a generation trained on its winners learned to give a number without learning which unit the request names.`;
}
