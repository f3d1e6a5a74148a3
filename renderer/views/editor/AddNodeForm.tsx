import { forwardRef, useState } from 'react';
import type { DocGraph, NodeKind } from '../../lib/workflowGraph.ts';
import { useLab } from '../../useLab.ts';

/** Adds a node (agent, tool or skill) to the workflow. Alt+N focuses its id field. */
export const AddNodeForm = forwardRef<HTMLInputElement, { graph: DocGraph | null }>(function AddNodeForm({ graph }, idRef) {
  const editGraph = useLab((s) => s.editGraph);
  const [id, setId] = useState('');
  const [kind, setKind] = useState<NodeKind>('agent');
  const [role, setRole] = useState('');
  const [name, setName] = useState('calculator');
  const roles = graph?.roles ?? [];
  const roleValue = roles.some((r) => r.name === role) ? role : (roles[0]?.name ?? '');

  return (
    <form
      className="add-node row wrap"
      aria-label="Add a node"
      onSubmit={(e) => {
        e.preventDefault();
        const ok = editGraph({
          op: 'addNode',
          node: {
            id: id.trim(),
            kind,
            ...(kind !== 'tool' || roleValue ? { role: roleValue || undefined } : {}),
            ...(kind === 'tool' ? { tool: name.trim() } : {}),
            ...(kind === 'skill' ? { skill: name.trim() } : {}),
          },
        });
        if (ok) setId('');
      }}
    >
      <span>Add</span>
      <select aria-label="Kind of the new node" data-testid="node-add-kind" value={kind} onChange={(e) => setKind(e.target.value as NodeKind)}>
        <option value="agent">agent</option>
        <option value="tool">tool</option>
        <option value="skill">skill</option>
      </select>
      <input ref={idRef} aria-label="Id of the new node" data-testid="node-add-id" placeholder="node id" size={10} value={id} onChange={(e) => setId(e.target.value)} />
      <select aria-label="Role of the new node" data-testid="node-add-role" value={roleValue} onChange={(e) => setRole(e.target.value)}>
        {kind === 'tool' && <option value="">no role</option>}
        {roles.map((r) => (
          <option key={r.name} value={r.name}>
            {r.name}
          </option>
        ))}
      </select>
      {kind !== 'agent' && <input aria-label={kind === 'tool' ? 'Tool name' : 'Skill name'} placeholder={kind} size={10} value={name} onChange={(e) => setName(e.target.value)} />}
      <button type="submit" data-testid="node-add" disabled={!id.trim()}>
        Add node
      </button>
    </form>
  );
});
