/**
 * The MASS optimizer in the edit language (edits.ts): the same model reads the task, the current
 * design, its workspace's evidence and the pairwise history, and names ONE edit of the design,
 * decoded under the grammar of every valid, new edit (`editSchema(editOptions(...))`). So each
 * reply that completes is a valid design the loop has not tried; a reply cut off at the token
 * budget is rejected (`UNPARSABLE`), never repaired. One call, stored as an ordinary one-node
 * Flowlab run (stored.ts), like the free-text optimizer (optimizer.ts), whose `Optimized` shape it
 * returns: the proposal holds the edit, its text (`changes_from_previous`) and the design it gives
 * (`improved_multi_agent_design`); the other free-text fields are empty (the language has none).
 */
import { mulberry32 } from '../random.ts';
import type { Grade, Grader } from '../tasks/types.ts';
import { designJson, renderMassDesign, DESIGN_LIMITS, type DesignCatalogue, type DesignLimits } from './design.ts';
import { editOptions, editSchema, editText, orderedEdit, readEdit, type EditOption } from './edits.ts';
import type { OptimizerInput, Optimized } from './optimizer.ts';
import { answerValue, runStep, type StepDeps } from './stored.ts';
import type { EditMenu, MassDesign, MassFamily, OptimizerProposal } from './types.ts';

/**
 * Token budget of one edit reply. The longest edit of the learn-design menu is 106 characters of
 * compact JSON (edits.test.ts); stories260K spends about one token per character and the grammar
 * lets it put whitespace between JSON tokens, hence the margin.
 */
export const EDIT_TOKENS = 192;

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 3) + '...' : s);

/**
 * The edit optimizer's prompt (deterministic, about 600–1,000 characters): what the edits do,
 * the task, the current design as rendered, its evidence, and the most recent history entries
 * that fit in `historyChars` (each verdict's outcome, rationale and the design change behind it).
 */
export function editPrompt(input: OptimizerInput, historyChars = 360): string {
  const { current } = input;
  const lines: string[] = [];
  let used = 0;
  for (const h of [...input.history].reverse()) {
    const line = `- ${h.key}: ${h.outcome}. "${clip(h.rationale, 60)}"${h.diff ? ` Change: ${clip(h.diff.replace(/\n/g, ' | '), 90)}` : ''}`;
    if (lines.length && used + line.length + 1 > historyChars) break;
    lines.unshift(line);
    used += line.length + 1;
  }
  return [
    `Improve team design v${current.version} with one edit. A check catches a wrong reply; a retry asks the agent again when its check fails; a hop can read an earlier agent's reply.`,
    `Task: ${input.taskPrompt}`,
    `Design v${current.version}:\n${renderMassDesign(current.design).split('\n').slice(1).join('\n')}`,
    `Evidence v${current.version}: ${input.evidence}`,
    `History (oldest first):\n${lines.length ? lines.join('\n') : '- none yet'}`,
    'Edit JSON:',
  ].join('\n');
}

/** The proposal record of an edit (what the loop stores; the free-text fields are empty). */
export function editProposal(option: EditOption): OptimizerProposal & { edit: Record<string, unknown> } {
  return {
    edit: orderedEdit(option.edit),
    improved_multi_agent_design: JSON.parse(designJson(option.design)) as unknown,
    changes_from_previous: editText(option.edit),
    why_it_should_improve: '',
    evidence_used: '',
    expected_impact: '',
    verification_checks: '',
  };
}

/**
 * Asks the optimizer once for an edit (one stored `mass` step) among the valid edits of
 * `input.current.design` from `menu` that give a design not in `tried`. The step's grade is 1 when
 * the reply is one of them. Returns `Optimized` with the design, or issues: `NO_EDIT` (no valid new
 * edit left: nothing is asked), `UNPARSABLE` (the reply is not one of the edits, e.g. cut off), or
 * the failed call's code. Errors: those of `runStep`.
 */
export async function optimizeEdit(input: OptimizerInput, family: MassFamily, deps: StepDeps, opts: { experimentId: string; seed: number; maxTokens?: number; temperature?: number; catalogue: DesignCatalogue; limits?: DesignLimits; menu: EditMenu; tried: readonly MassDesign[]; random?: boolean; about?: Record<string, unknown> }): Promise<Optimized & { options: number }> {
  const options = editOptions(input.current.design, opts.menu, opts.catalogue, opts.limits ?? DESIGN_LIMITS, opts.tried);
  if (!options.length) return { experimentId: opts.experimentId, runId: '', issues: [{ code: 'NO_EDIT', path: '', message: 'no edit of the menu gives a valid design not tried yet' }], options: 0 };
  if (opts.random) {
    // The SIMULATED random proposer: uniform over the valid new edits, from the call's seed; no model call, nothing stored but the loop's records.
    const pick = options[Math.floor(mulberry32(opts.seed)() * options.length)]!;
    return { experimentId: '', runId: '', proposal: { ...editProposal(pick), why_it_should_improve: 'RANDOM proposer (SIMULATED): drawn uniformly among the valid edits' }, design: pick.design, issues: [], options: options.length };
  }
  const grader: Grader = {
    grade(answer: unknown): Grade {
      const o = readEdit(answerValue(answer), options);
      return { score: o ? 1 : 0, correct: !!o, extracted: o ? editText(o.edit) : null, expected: '', reason: o ? 'a valid edit' : 'the reply is none of the valid edits' };
    },
  };
  const doc = {
    name: 'mass-edit-optimizer',
    description: 'MASS optimizer (edit language): one edit of the team design from a menu, under a grammar of the valid edits',
    roles: { optimizer: { kind: 'planner', instructions: 'You improve the design of an agent team from evidence, one edit at a time.' } },
    nodes: [{ id: 'optimizer', role: 'optimizer', inputs: { brief: 'task.optimizer_prompt' }, prompt: '{{brief}}', max_tokens: opts.maxTokens ?? EDIT_TOKENS, temperature: opts.temperature ?? 0.9, output: { schema: editSchema(options) } }],
    answer: 'optimizer',
  };
  const step = await runStep(deps, {
    experimentId: opts.experimentId,
    workflowText: JSON.stringify(doc, null, 1),
    task: input.task,
    input: { optimizer_prompt: editPrompt(input) },
    grader,
    checks: family.checks,
    seed: opts.seed,
    about: { step: 'optimizer', mode: 'edit', from: input.current.version, options: options.length, ...opts.about },
  });
  const ids = { experimentId: step.run.experimentId, runId: step.run.runId, options: options.length };
  if (step.run.status !== 'completed') {
    const ev = step.events.find((e) => e.status === 'failed');
    return { ...ids, issues: [{ code: ev?.errorCode ?? 'FAILED', path: '', message: ev?.message ?? 'the optimizer call failed' }] };
  }
  const chosen = readEdit(answerValue(step.run.answer), options);
  if (!chosen) return { ...ids, issues: [{ code: 'UNPARSABLE', path: 'edit', message: 'the reply is none of the valid edits' }] };
  return { ...ids, proposal: editProposal(chosen), design: chosen.design, issues: [] };
}
