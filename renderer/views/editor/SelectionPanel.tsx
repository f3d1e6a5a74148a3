import { useState } from 'react';
import type { DocGraph } from '../../lib/workflowGraph.ts';
import { useLab } from '../../useLab.ts';

/** The selected node (role, connect, remove) or edge (remove). */
export function SelectionPanel({ graph }: { graph: DocGraph }) {
  const selectedNode = useLab((s) => s.editor.selectedNode);
  const selectedEdge = useLab((s) => s.editor.selectedEdge);
  const editGraph = useLab((s) => s.editGraph);
  const node = selectedNode ? graph.nodes.find((n) => n.id === selectedNode) : undefined;
  const edge = selectedEdge ? graph.edges.find((e) => e.id === selectedEdge) : undefined;

  if (edge) {
    return (
      <section className="panel" data-testid="edge-panel" aria-label="Selected edge">
        <h3>
          Edge <code>{edge.from}</code> → <code>{edge.to}</code>
        </h3>
        <p className="muted small">
          {edge.type} edge{edge.port ? ` into port “${edge.port}”` : ''}
          {edge.condition ? ` · if ${edge.condition}` : ''}
          {edge.maxIterations !== undefined ? ` · loop, at most ${edge.maxIterations} iterations` : ''} · written in <code>{edge.origin}</code>
        </p>
        <button type="button" className="danger" data-testid="edge-remove" onClick={() => editGraph({ op: 'removeEdge', edgeId: edge.id })}>
          Remove edge (Delete)
        </button>
      </section>
    );
  }
  if (!node) {
    return (
      <p className="muted small panel-hint">
        Click a node to change its role or connect it; Shift+click another node to add a data edge from the selected one.
      </p>
    );
  }
  return <NodePanel key={node.id} graph={graph} nodeId={node.id} />;
}

function NodePanel({ graph, nodeId }: { graph: DocGraph; nodeId: string }) {
  const editGraph = useLab((s) => s.editGraph);
  const node = graph.nodes.find((n) => n.id === nodeId)!;
  const others = graph.nodes.filter((n) => n.id !== nodeId);
  const [target, setTarget] = useState(others[0]?.id ?? '');
  const [type, setType] = useState<'data' | 'control'>('data');
  const [loop, setLoop] = useState('');
  const targetId = others.some((n) => n.id === target) ? target : (others[0]?.id ?? '');

  return (
    <section className="panel" data-testid="node-panel" aria-label={`Node ${node.id}`}>
      <h3>
        Node <code>{node.id}</code> <span className="muted">{node.kind}{node.tool ? ` · tool ${node.tool}` : ''}{node.skill ? ` · skill ${node.skill}` : ''}</span>
      </h3>
      <label className="row">
        <span>Role</span>
        <select data-testid="node-role-select" aria-label={`Role of node ${node.id}`} value={node.role ?? ''} onChange={(e) => e.target.value && editGraph({ op: 'setRole', id: node.id, role: e.target.value })}>
          {!node.role && <option value="">— no role —</option>}
          {node.role && !graph.roles.some((r) => r.name === node.role) && <option value={node.role}>{node.role} (not defined)</option>}
          {graph.roles.map((r) => (
            <option key={r.name} value={r.name}>
              {r.name} ({r.kind ?? 'role'})
            </option>
          ))}
        </select>
      </label>
      <form
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          const max = loop.trim() ? Number(loop) : undefined;
          editGraph({ op: 'addEdge', from: node.id, to: targetId, type, ...(max !== undefined ? { maxIterations: max } : {}) });
        }}
      >
        <span>Edge to</span>
        <select data-testid="edge-target" aria-label="Edge target" value={targetId} onChange={(e) => setTarget(e.target.value)}>
          {others.map((n) => (
            <option key={n.id} value={n.id}>
              {n.id}
            </option>
          ))}
        </select>
        <select data-testid="edge-type" aria-label="Edge type" value={type} onChange={(e) => setType(e.target.value as 'data' | 'control')}>
          <option value="data">data (solid)</option>
          <option value="control">control (dashed)</option>
        </select>
        <input data-testid="edge-loop" aria-label="Loop: max iterations (empty for a plain edge)" placeholder="loop max" inputMode="numeric" size={7} value={loop} onChange={(e) => setLoop(e.target.value)} />
        <button type="submit" data-testid="edge-add" disabled={!targetId}>
          Add edge
        </button>
      </form>
      <button type="button" className="danger" data-testid="node-remove" onClick={() => editGraph({ op: 'removeNode', id: node.id })}>
        Remove node (Delete)
      </button>
    </section>
  );
}
