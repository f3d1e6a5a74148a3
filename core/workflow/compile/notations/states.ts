/**
 * The state-machine notation (FloWright's states + transitions), read for the parse stage
 * (core/workflow/compile/parse.ts). Semantics, as docs/workflow-spec.md states them:
 *
 *  - each `states[i]` is a node written like a graph node (`id`, `role`, `tool`, `inputs`, ...);
 *  - each `transitions[i]` (`from`, `to`, optional `port`, `condition`, `max_iterations`) is a
 *    data edge `from -> to`: the target receives the source's output on `port`, else on the
 *    target's own input port that already reads from the source (`expression: solve.expression`),
 *    else on a port named after the source (as `depends_on` does). A transition with
 *    `max_iterations` is a loop (back) transition; an unbounded one closing a cycle is
 *    UNBOUNDED_CYCLE (validate stage);
 *  - `start` names the state the machine starts in; every state must be reachable from it;
 *  - `terminal` lists the states where the machine stops: a terminal state has no forward
 *    transition out (loop transitions may leave it: the machine stops there once none fires), and
 *    every state without a forward transition out must be terminal;
 *  - the answer is `answer:` if given, else the only terminal state (several: set `answer`).
 */
import type { DocPath } from '../../graph.ts';
import type { WorkflowDoc } from '../../spec.ts';
import { issueList, type DeclaredEdge, type NotationSource, type RawNode } from '../types.ts';

/**
 * Reads `states`, `transitions`, `start` and `terminal` of a zod-valid document.
 *
 * Returns the states as node entries (`['states', i]`), the transitions as declared edges
 * (`['transitions', i]`, endpoints at `.from`/`.to`; a transition to or from no state is left to
 * the build stage's DANGLING_EDGE), and the implied answer. Issues (all located):
 * BAD_START (`start` missing or not a state), BAD_TERMINAL (`terminal` missing, naming no state,
 * listed twice, a terminal state with a forward transition out, or a non-terminal state with
 * none), UNREACHABLE_STATE (no path of transitions from the start state). Pure.
 */
export function readStates(doc: WorkflowDoc): NotationSource {
  const { issues, add: issue } = issueList();
  const states = (doc.states ?? []) as RawNode[];
  const transitions = doc.transitions ?? [];
  const index = new Map<string, number>();
  states.forEach((s, i) => { if (s.id && !index.has(s.id)) index.set(s.id, i); });
  const known = [...index.keys()].join(', ') || 'none';

  const edges: DeclaredEdge[] = transitions.map((t, i) => {
    const path: DocPath = ['transitions', i];
    const target = index.has(t.to) ? states[index.get(t.to)!] : undefined;
    return {
      from: t.from,
      to: t.to,
      type: 'data',
      port: t.port ?? portReading(target, t.from),
      condition: t.condition,
      maxIterations: t.max_iterations,
      path,
      fromPath: [...path, 'from'],
      toPath: [...path, 'to'],
    };
  });
  // Transitions between states (dangling ones are the build stage's), forward ones apart.
  const wired = edges.filter((e) => index.has(e.from) && index.has(e.to));
  const forwardOut = (id: string) => wired.filter((e) => e.from === id && !e.maxIterations);

  const start = doc.start;
  if (start === undefined) issue('BAD_START', ['start'], `a state machine needs \`start: <state>\` (states: ${known})`);
  else if (!index.has(start)) issue('BAD_START', ['start'], `start "${start}" is not a state (states: ${known})`);

  const terminal = doc.terminal ?? [];
  if (terminal.length === 0) issue('BAD_TERMINAL', ['terminal'], `a state machine needs \`terminal: [<state>, ...]\`, the states where it stops (states: ${known})`);
  const terminals = new Set<string>();
  terminal.forEach((t, i) => {
    if (!index.has(t)) issue('BAD_TERMINAL', ['terminal', i], `terminal "${t}" is not a state (states: ${known})`);
    else if (terminals.has(t)) issue('BAD_TERMINAL', ['terminal', i], `terminal state "${t}" is listed twice`);
    else {
      terminals.add(t);
      const out = forwardOut(t)[0];
      if (out) issue('BAD_TERMINAL', ['terminal', i], `terminal state "${t}" has a transition to "${out.to}" (transitions[${out.path[1]}]); the machine stops at a terminal state (only a loop transition with max_iterations may leave it)`);
    }
  });
  for (const [id, i] of index) {
    if (!terminals.has(id) && forwardOut(id).length === 0) {
      issue('BAD_TERMINAL', ['states', i], `state "${id}" has no transition out and is not terminal: add a transition from it or list it in \`terminal\``);
    }
  }

  if (start !== undefined && index.has(start)) {
    const seen = new Set<string>([start]);
    const queue = [start];
    while (queue.length) {
      const x = queue.shift()!;
      for (const e of wired) if (e.from === x && !seen.has(e.to)) { seen.add(e.to); queue.push(e.to); }
    }
    for (const [id, i] of index) {
      if (!seen.has(id)) issue('UNREACHABLE_STATE', ['states', i], `state "${id}" cannot be reached from the start state "${start}" by transitions`);
    }
  }

  // Several terminal states and no `answer`: the validate stage's BAD_ANSWER (several final nodes).
  const answer = doc.answer ?? (terminals.size === 1 ? [...terminals][0] : undefined);
  return { entries: states.map((raw, i) => ({ raw, path: ['states', i] })), edges, answer, issues };
}

/** The first input port of `state` that reads from node `from` (`<port>: from` or `from.<field>`). */
function portReading(state: RawNode | undefined, from: string): string | undefined {
  for (const [port, spec] of Object.entries(state?.inputs ?? {})) {
    const src = typeof spec === 'string' ? spec : spec.from;
    if (src.split('.')[0] === from) return port;
  }
  return undefined;
}
