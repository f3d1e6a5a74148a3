import type { RoleName } from '../ids.ts';
import { rolesThatRun, type Graph } from '../workflow/graph.ts';
import { FlowlabError } from '../errors.ts';

/**
 * Co-evolution modes (FloWright, "co-evolution"): which roles learn from a group of rollouts.
 * - `single:<role>`: one role alone;
 * - `upstream-downstream`: the upstream designers (a design stage's designer, and roles of kind
 *   generator, planner or orchestrator) together with the downstream executors (kind executor);
 * - `agent-skill`: the roles running skill nodes together with the roles running agent nodes
 *   that feed or consume them;
 * - `multi-agent`: every role that runs an agent or skill node.
 */
export type CoevolutionMode = { kind: 'single'; role: RoleName } | { kind: 'upstream-downstream' } | { kind: 'agent-skill' } | { kind: 'multi-agent' };

/** A co-evolution mode that does not parse or does not fit the workflow; the message says why. */
export class ModeError extends FlowlabError<'BAD_MODE'> {
  override readonly name = 'ModeError';
  constructor(message: string) {
    super('BAD_MODE', message);
  }
}

export function parseMode(text: string): CoevolutionMode {
  if (text.startsWith('single:') && text.length > 7) return { kind: 'single', role: text.slice(7) as RoleName };
  if (text === 'upstream-downstream' || text === 'agent-skill' || text === 'multi-agent') return { kind: text };
  throw new ModeError(`unknown co-evolution mode "${text}" (modes: single:<role>, upstream-downstream, agent-skill, multi-agent)`);
}

export function formatMode(m: CoevolutionMode): string {
  return m.kind === 'single' ? `single:${m.role}` : m.kind;
}

/** The roles that learn under a mode, in the workflow's role order. Throws ModeError when the mode does not fit the workflow. */
export function learningRoles(graph: Graph, mode: CoevolutionMode): RoleName[] {
  const runners = new Set(rolesThatRun(graph));
  const all = [...graph.roles.values()];
  let picked: RoleName[];
  switch (mode.kind) {
    case 'single':
      if (!graph.roles.has(mode.role)) throw new ModeError(`single:${mode.role}: the workflow has no role "${mode.role}" (roles: ${[...graph.roles.keys()].join(', ')})`);
      picked = [mode.role];
      break;
    case 'upstream-downstream': {
      // The design stage's designer is upstream whatever its kind: it wires what the executors run.
      const designer = graph.nodes.find((n) => n.design)?.design?.role;
      const up = all.filter((r) => r.name === designer || ['generator', 'planner', 'orchestrator'].includes(r.kind)).map((r) => r.name);
      const down = all.filter((r) => r.kind === 'executor').map((r) => r.name);
      if (!up.length || !down.length) throw new ModeError(`upstream-downstream needs an upstream role (generator, planner or orchestrator) and an executor role; this workflow has ${up.length ? 'no executor' : 'no upstream role'}`);
      picked = [...up, ...down];
      break;
    }
    case 'agent-skill': {
      const skillNodes = graph.nodes.filter((n) => n.kind === 'skill');
      if (!skillNodes.length) throw new ModeError('agent-skill needs skill nodes; this workflow has none');
      const skillRoles = new Set(skillNodes.map((n) => n.role!));
      const ids = new Set(skillNodes.map((n) => n.id as string));
      const neighbours = graph.edges.flatMap((e) => (ids.has(e.to) ? [e.from] : ids.has(e.from) ? [e.to] : []));
      const agentRoles = graph.nodes.filter((n) => n.kind === 'agent' && neighbours.includes(n.id)).map((n) => n.role!);
      picked = [...new Set([...skillRoles, ...agentRoles])];
      break;
    }
    case 'multi-agent':
      picked = all.map((r) => r.name).filter((r) => runners.has(r));
      break;
    default:
      return mode satisfies never;
  }
  const order = all.map((r) => r.name);
  return picked.filter((r, i) => picked.indexOf(r) === i).sort((a, b) => order.indexOf(a) - order.indexOf(b));
}
