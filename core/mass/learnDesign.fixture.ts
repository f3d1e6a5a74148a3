/**
 * Scripted teams for the `learn-design` MASS family (SIMULATED: no model; tests only).
 *
 * - `oracleTeam()`: the perfect model. Each sub-agent reads the request from its prompt and
 *   answers every field its contract's schema asks for as the request's cue words fix it
 *   (cuedTool, cuedArguments); the bare task's answer likewise. Through the pipeline it scores 1 on
 *   every task, whatever (valid) design runs.
 * - `sloppyTeam()`: the same, except that on its FIRST try the picker always says `search` (a class
 *   of mistakes: wrong on every weather and math task); a retried call (`…_rd<k>_…`, a re-delegation)
 *   answers right. So a check on the picker plus a retry fixes what version 0 gets wrong.
 * - `scriptedEdits(edits)`: an optimizer that, at its k-th call, replies with the k-th edit of the
 *   list when the grammar offers it (else the grammar's first branch, first value), and a judge
 *   that prefers the side whose evidence answer is right by the request's cue words (tie when both
 *   are as right).
 */
import type { GenerateRequest } from '../model/provider.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import { cuedArguments, cuedTool } from './learnDesignFamily.ts';
import { orderedEdit, type MassEdit } from './edits.ts';
import { parseMassDesign } from './design.ts';
import { FIRST_DESIGNS, massFamily } from './family.ts';
import type { MassDesign } from './types.ts';

/** The learn-design MASS family, the catalogue its designs parse against, and its first design (version 0), for tests. */
export const ldFamily = massFamily('learn-design');
export const ldCatalogue = { checks: ldFamily.checks.names() };
export function ldFirstDesign(): MassDesign {
  const r = parseMassDesign(FIRST_DESIGNS['learn-design'], ldCatalogue);
  if (!r.ok) throw new Error(r.issues[0]!.message);
  return r.design;
}

const requestIn = (prompt: string) => /Request: ([^\n]*)/.exec(prompt)?.[1] ?? '';

/** The right value of a field for a request, or '' for a field the family does not grade. */
function rightField(field: string, request: string): string {
  if (field === 'tool') return cuedTool(request);
  if (field === 'argument') return cuedArguments(request)[0] ?? '';
  return 'ok';
}

function teamReply(r: GenerateRequest, sloppy: boolean): string | undefined {
  const node = r.key.nodeId;
  const request = requestIn(r.prompt);
  if (node === 'orchestrator') return r.jsonSchema ? '{"delegate":"no","ask":""}' : 'Call the team.';
  if (node === 'answer' || node === 'helper') return JSON.stringify({ tool: cuedTool(request), argument: cuedArguments(request)[0] ?? 'now' });
  if (/^h\d+_/.test(node)) {
    const props = Object.keys(((r.jsonSchema ?? {}) as { properties?: Record<string, unknown> }).properties ?? {});
    const firstTry = !/_rd\d+_/.test(node);
    return JSON.stringify(Object.fromEntries(props.map((f) => [f, sloppy && firstTry && f === 'tool' ? 'search' : rightField(f, request)])));
  }
  return undefined;
}

/** The perfect team (SIMULATED), see the module comment. */
export function oracleTeam(): ScriptedProvider {
  return new ScriptedProvider((r) => teamReply(r, false) ?? '{}');
}

/** Scores an evidence line's answer by the request's cue words: 0.5 per right part. */
function evidenceScore(evidence: string, request: string): number {
  const m = /answer: (\{[^}]*\})/.exec(evidence);
  if (!m) return 0;
  const a = JSON.parse(m[1]!) as { tool?: string; argument?: string };
  return (a.tool === cuedTool(request) ? 0.5 : 0) + (a.argument !== undefined && cuedArguments(request).includes(a.argument) ? 0.5 : 0);
}

/** The sloppy team (SIMULATED) with a scripted edit optimizer and a right-answer judge; see the module comment. */
export function sloppyTeam(edits: readonly MassEdit[] = []): ScriptedProvider & { proposed: string[] } {
  let k = 0;
  const proposed: string[] = [];
  const p = new ScriptedProvider((r) => {
    const node = r.key.nodeId;
    if (node === 'optimizer') {
      const schema = r.jsonSchema as { properties: { edit: { oneOf: Array<{ properties: Record<string, { const?: unknown; enum?: unknown[] }> }> } } };
      const branches = schema.properties.edit.oneOf;
      const want = edits[k++];
      const offered = want && branches.some((b) => Object.entries(orderedEdit(want)).every(([f, v]) => b.properties[f]?.const === v || (b.properties[f]?.enum ?? []).includes(v)));
      const edit = offered ? orderedEdit(want) : Object.fromEntries(Object.entries(branches[0]!.properties).map(([f, s]) => [f, s.const ?? s.enum![0]]));
      proposed.push(JSON.stringify(edit));
      return JSON.stringify({ edit });
    }
    if (node === 'judge') {
      const request = requestIn(r.prompt);
      const a = evidenceScore(/\nA: (.*)/.exec(r.prompt)?.[1] ?? '', request);
      const b = evidenceScore(/\nB: (.*)/.exec(r.prompt)?.[1] ?? '', request);
      return JSON.stringify(a === b ? { winner: 'tie', rationale: 'Both answers are as right.' } : { winner: a > b ? 'A' : 'B', rationale: `${a > b ? 'B' : 'A'} names the wrong tool.` });
    }
    return teamReply(r, true) ?? '{}';
  });
  return Object.assign(p, { proposed });
}
