/**
 * MASS's optimizer (public code: `harness_improvement/iterate_multi_agent_prompt.py`): the same
 * model reads the task, the current, best and first designs, the current workspace's evidence
 * and the whole pairwise history (verdicts with rationales, takeaways and the design diff behind
 * each) and returns `{improved_multi_agent_design, changes_from_previous, why_it_should_improve,
 * evidence_used, expected_impact, verification_checks}`, told to strengthen contracts and hops
 * before roles and instructions. The reply is decoded under a JSON-schema grammar of that shape
 * (the design part too, with the catalogue's check names), then the design is validated
 * (design.ts): a design that breaks the format is rejected with its located issues, never
 * repaired. One call, stored as an ordinary one-node Flowlab run (stored.ts).
 */
import { MAX_REDELEGATIONS } from './redelegate.ts';
import type { Grade, Grader, Task } from '../tasks/types.ts';
import { designJson, parseMassDesign, DESIGN_LIMITS, type DesignCatalogue, type DesignLimits } from './design.ts';
import { answerValue, runStep, type StepDeps } from './stored.ts';
import type { MassDesign, MassDesignIssue, MassFamily, OptimizerProposal } from './types.ts';

/** The six fields of the optimizer's reply, in order. */
export const PROPOSAL_FIELDS = ['improved_multi_agent_design', 'changes_from_previous', 'why_it_should_improve', 'evidence_used', 'expected_impact', 'verification_checks'] as const;

/** Agent ids the optimizer may use besides those of the designs it reads. */
export const AGENT_ID_POOL = ['planner', 'solver', 'reviewer'] as const;
/** Contract field and artefact names the optimizer may use besides those of the designs it reads. */
export const FIELD_POOL = ['tool', 'reply', 'reason', 'plan', 'check', 'note'] as const;

/**
 * The grammar of the optimizer's reply: the six fields, the design in version-1 form. Its bounds
 * are tighter than the validator's limits (`limits` caps them) so a whole reply fits a small
 * model's context: at most 2 agents and 3 hops, short texts, checks named from the catalogue,
 * agent ids (and the ids hops call and read) from `vocab.agents`, contract field and artefact
 * names from `vocab.fields` (a grammar has no regular expressions; free-text names from a 260K
 * model are never valid names). The validator still checks
 * everything the grammar cannot: a hop calling an agent the design does not define, reading one
 * not called before, a duplicate id.
 */
export function optimizerSchema(catalogue: DesignCatalogue, limits: DesignLimits = DESIGN_LIMITS, vocab: { agents: readonly string[]; fields: readonly string[] } = { agents: AGENT_ID_POOL, fields: FIELD_POOL }, textChars = 24): Record<string, unknown> {
  const str = (max: number) => ({ type: 'string', minLength: 1, maxLength: max });
  const names = (max: number) => ({ type: 'array', items: { enum: [...new Set(vocab.fields)] }, maxItems: max });
  const id = { enum: [...new Set(vocab.agents)] };
  const agent = {
    type: 'object',
    properties: {
      agent_id: id,
      role: str(Math.min(limits.maxRole, 20)),
      instruction: str(Math.min(limits.maxInstruction, 40)),
      contract: { type: 'object', properties: { fields: { ...names(Math.min(limits.maxContractFields, 2)), minItems: 1 }, artefacts: names(1), checks: { type: 'array', items: { enum: [...catalogue.checks] }, maxItems: 2 } }, required: ['fields', 'artefacts', 'checks'] },
    },
    required: ['agent_id', 'role', 'instruction', 'contract'],
  };
  // Re-delegation (redelegate.ts) is optional on a hop: to whom a reply that broke its contract goes, how many times.
  const redelegate = { type: 'object', properties: { to: id, max: { enum: Array.from({ length: MAX_REDELEGATIONS }, (_, i) => i + 1) } }, required: ['to', 'max'] };
  const hop = { type: 'object', properties: { agent_id: id, reads: { type: 'array', items: id, maxItems: 1 }, redelegate }, required: ['agent_id', 'reads'] };
  const design = { type: 'object', properties: { agents: { type: 'array', items: agent, minItems: 1, maxItems: Math.min(limits.maxAgents, 2) }, hops: { type: 'array', items: hop, minItems: 1, maxItems: Math.min(limits.maxHops, 3) } }, required: ['agents', 'hops'] };
  return {
    type: 'object',
    properties: Object.fromEntries(PROPOSAL_FIELDS.map((f) => [f, f === 'improved_multi_agent_design' ? design : str(textChars)])),
    required: [...PROPOSAL_FIELDS],
  };
}

/** One entry of the pairwise history the optimizer reads. */
export interface HistoryEntry {
  /** E.g. `v2_vs_baseline`, `v2_vs_v1` (arbitration), `v2_vs_v1 (direct)`. */
  key: string;
  /** `candidate`, `baseline`, `champion` or `tie`, as the verdict read. */
  outcome: string;
  rationale: string;
  /** The line diff of the design from the version before it (diffText), '' for the first. */
  diff: string;
}

/** What the optimizer reads. */
export interface OptimizerInput {
  task: Task;
  taskPrompt: string;
  current: { version: number; design: MassDesign };
  best?: { version: number; design: MassDesign };
  first: MassDesign;
  /** The current design's workspace as the judge saw it (evidenceOf). */
  evidence: string;
  history: readonly HistoryEntry[];
}

/** Cue words of a rationale sentence worth acting on (MASS public code picks rationale sentences by such cues). */
const CUES = /\b(fail|fails|failed|missing|wrong|mismatch|not|lack|weak|error|broken|empty|none)\b/i;

/** The sentences of a rationale that name a defect (at most `max`): the "actionable takeaways". */
export function takeaways(rationale: string, max = 2): string[] {
  return rationale.split(/(?<=[.!?])\s+/).map((s) => s.trim()).filter((s) => s && CUES.test(s)).slice(0, max);
}

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 3) + '...' : s);

/**
 * The optimizer's prompt (deterministic): instructions, task, current/best/first designs
 * (canonical JSON, clipped: 300/160/120 characters), evidence, then the most recent history
 * entries that fit in `historyChars` (at least one entry's worth is always kept: the history is
 * what the optimizer learns from), each with its takeaways and diff. About 1,450 characters at
 * most (stories260K spends about 0.8 tokens per character here; its reply up to 800).
 */
export function optimizerPrompt(input: OptimizerInput, historyChars = 450): string {
  const { current, best } = input;
  const head = [
    `Improve the team design v${current.version} -> v${current.version + 1}. Strengthen contracts and hops first (returns, checks, call order, who reads whom), then roles and instructions.`,
    `Task: ${input.taskPrompt}`,
    `Current v${current.version}: ${clip(designJson(current.design), 300)}`,
  ];
  if (best && best.version !== current.version) head.push(`Best v${best.version}: ${clip(designJson(best.design), 160)}`);
  if (current.version !== 0 && best?.version !== 0) head.push(`First v0: ${clip(designJson(input.first), 120)}`);
  head.push(`Evidence v${current.version}: ${input.evidence}`);
  const lines: string[] = [];
  let used = 0;
  for (const h of [...input.history].reverse()) {
    const t = takeaways(h.rationale);
    const line = `- ${h.key}: ${h.outcome}. "${clip(h.rationale, 80)}"${t.length ? ` Fix: ${t.map((x) => clip(x, 50)).join(' ')}` : ''}${h.diff ? ` Diff: ${clip(h.diff.replace(/\n/g, ' | '), 100)}` : ''}`;
    if (lines.length && used + line.length + 1 > historyChars) break;
    lines.unshift(line);
    used += line.length + 1;
  }
  return [...head, `History (oldest first):\n${lines.length ? lines.join('\n') : '- none yet'}`, 'JSON:'].join('\n');
}

/** The result of one optimizer call. */
export interface Optimized {
  experimentId: string;
  runId: string;
  /** The reply as decoded (undefined when the call failed or did not parse). */
  proposal?: OptimizerProposal;
  /** The validated design, when the proposal passed the validator. */
  design?: MassDesign;
  /** Why it was rejected: the validator's located issues, or the failed call's message. */
  issues: MassDesignIssue[];
}

/** The agent ids and contract names of the designs the optimizer reads, then AGENT_ID_POOL and FIELD_POOL. */
export function vocabularyOf(input: Pick<OptimizerInput, 'current' | 'best' | 'first'>): { agents: string[]; fields: string[] } {
  const ds = [input.current.design, input.best?.design, input.first].filter((d): d is MassDesign => !!d);
  return {
    agents: [...new Set([...ds.flatMap((d) => d.agents.map((a) => a.agent_id)), ...AGENT_ID_POOL])],
    fields: [...new Set([...ds.flatMap((d) => d.agents.flatMap((a) => [...a.contract.fields, ...a.contract.artefacts])), ...FIELD_POOL])],
  };
}

function readProposal(answer: unknown): OptimizerProposal | undefined {
  const v = answerValue(answer);
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if (!PROPOSAL_FIELDS.every((f) => f in o)) return undefined;
  return o as unknown as OptimizerProposal;
}

/**
 * Asks the optimizer once (one stored `mass` step) and validates its design against `catalogue`.
 * The step's grade is 1 when the design passed the validator, else 0. Errors: those of `runStep`.
 */
export async function optimize(input: OptimizerInput, family: MassFamily, deps: StepDeps, opts: { experimentId: string; seed: number; maxTokens?: number; temperature?: number; catalogue: DesignCatalogue; limits?: DesignLimits; about?: Record<string, unknown> }): Promise<Optimized> {
  const limits = opts.limits ?? DESIGN_LIMITS;
  const validate = (answer: unknown) => {
    const p = readProposal(answer);
    return { p, r: p ? parseMassDesign(p.improved_multi_agent_design, opts.catalogue, limits) : undefined };
  };
  const grader: Grader = {
    grade(answer: unknown): Grade {
      const { p, r } = validate(answer);
      const ok = !!r?.ok;
      return { score: ok ? 1 : 0, correct: ok, extracted: p ? 'proposal' : null, expected: '', reason: ok ? 'the design passed the validator' : p ? `the design was rejected: ${r!.issues.map((i) => `${i.path || '(design)'}: ${i.message}`).join('; ')}` : 'no proposal' };
    },
  };
  const doc = {
    name: 'mass-optimizer',
    description: 'MASS optimizer: proposes the next team design from the feedback history',
    roles: { optimizer: { kind: 'planner', instructions: 'You improve the design of an agent team from evidence.' } },
    nodes: [{ id: 'optimizer', role: 'optimizer', inputs: { brief: 'task.optimizer_prompt' }, prompt: '{{brief}}', max_tokens: opts.maxTokens ?? 800, temperature: opts.temperature ?? 0.9, output: { schema: optimizerSchema(opts.catalogue, limits, vocabularyOf(input)) } }],
    answer: 'optimizer',
  };
  const step = await runStep(deps, {
    experimentId: opts.experimentId,
    workflowText: JSON.stringify(doc, null, 1),
    task: input.task,
    input: { optimizer_prompt: optimizerPrompt(input) },
    grader,
    checks: family.checks,
    seed: opts.seed,
    about: { step: 'optimizer', from: input.current.version, ...opts.about },
  });
  const ids = { experimentId: step.run.experimentId, runId: step.run.runId };
  if (step.run.status !== 'completed') {
    const ev = step.events.find((e) => e.status === 'failed');
    return { ...ids, issues: [{ code: ev?.errorCode ?? 'FAILED', path: '', message: ev?.message ?? 'the optimizer call failed' }] };
  }
  const { p, r } = validate(step.run.answer);
  if (!p) return { ...ids, issues: [{ code: 'NOT_A_PROPOSAL', path: '', message: 'the reply lacks the six proposal fields' }] };
  if (!r!.ok) return { ...ids, proposal: p, issues: r!.issues };
  return { ...ids, proposal: p, design: r!.design, issues: [] };
}
