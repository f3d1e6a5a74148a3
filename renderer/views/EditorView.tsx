import { useEffect, useMemo, useRef, useState } from 'react';
import { countOf } from '../lib/messages.ts';
import { workflowElements } from '../lib/elements.ts';
import { issueTargets, locateIssues, offsetOf } from '../lib/issues.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { useShortcut } from '../useShortcut.ts';
import { AddNodeForm } from './editor/AddNodeForm.tsx';
import { DocumentBar, OpenPrompt } from './editor/DocumentBar.tsx';
import { IssuesList } from './editor/IssuesList.tsx';
import { SelectionPanel } from './editor/SelectionPanel.tsx';
import { GraphCanvas } from './lazy.tsx';
import { KindLegend } from './Legend.tsx';
import { RoleModels } from './RoleModels.tsx';
import { LoadState } from './Status.tsx';

/** The workflow editor: the graph beside the YAML, kept in sync both ways; the document's controls above (DocumentBar). */
export function EditorView() {
  const { editor, theme, setText, selectEditorNode: selectNode, selectEditorEdge: selectEdge, editGraph, undoGraphEdit } = useLabPick(
    'editor', 'theme', 'setText', 'selectEditorNode', 'selectEditorEdge', 'editGraph', 'undoGraphEdit',
  );
  const { graph, validation, text } = editor;

  const issues = useMemo(() => (validation.status === 'ready' && !validation.data.ok ? locateIssues(validation.data.issues, graph) : []), [validation, graph]);
  const elements = useMemo(() => (graph ? workflowElements(graph, issueTargets(issues)) : []), [graph, issues]);

  const textarea = useRef<HTMLTextAreaElement>(null);
  const addId = useRef<HTMLInputElement>(null);
  useShortcut('addNode', () => addId.current?.focus());
  useShortcut('undoGraphEdit', () => undoGraphEdit());
  useShortcut('removeSelected', () => {
    if (editor.selectedNode) editGraph({ op: 'removeNode', id: editor.selectedNode });
    else if (editor.selectedEdge) editGraph({ op: 'removeEdge', edgeId: editor.selectedEdge });
  });

  // Caret requests from the store (issue clicked, node selected).
  useEffect(() => {
    const ta = textarea.current;
    const caret = editor.caret;
    if (!ta || !caret) return;
    const offset = offsetOf(ta.value, caret.line, caret.column);
    ta.setSelectionRange(offset, offset);
    const lineHeight = parseFloat(getComputedStyle(ta).lineHeight) || 18;
    ta.scrollTop = Math.max(0, (caret.line - 1) * lineHeight - ta.clientHeight / 3);
    if (caret.focus) ta.focus();
  }, [editor.caret]);

  return (
    <section className="view editor-view" aria-labelledby="editor-title">
      <header className="view-head">
        <h2 id="editor-title">Workflow editor</h2>
        <ExamplePicker />
        <ValidationChip />
      </header>
      <DocumentBar />
      <OpenPrompt />
      <div className="editor-grid">
        <div className="editor-graph">
          {graph ? (
            <>
              <GraphCanvas
                elements={elements}
                theme={theme}
                label={`Workflow graph: ${countOf(graph.nodes.length, 'node')}, ${countOf(graph.edges.length, 'edge')}`}
                selected={editor.selectedNode ?? editor.selectedEdge}
                onSelectNode={(id) => selectNode(id)}
                onSelectEdge={(id) => selectEdge(id)}
                onConnect={(from, to) => editGraph({ op: 'addEdge', from, to, type: 'data' })}
              />
              <KindLegend editor />
              <NodeChips />
            </>
          ) : (
            <div className="empty graph-empty" data-testid="editor-empty">
              <p>
                <strong>No workflow open.</strong> Open an example above (Alt+O), or paste a workflow's YAML into the text on the right.
              </p>
            </div>
          )}
          {editor.parseError && (
            <p className="note error" role="alert">
              <span aria-hidden="true">✗</span> The text is not valid YAML (line {editor.parseError.line ?? '?'}): {editor.parseError.message}. The graph shows the last text that parsed.
            </p>
          )}
          <AddNodeForm ref={addId} graph={graph} />
          {graph && <SelectionPanel graph={graph} />}
          <RoleModels />
        </div>
        <div className="editor-text">
          <label htmlFor="yaml-text" className="muted small">
            YAML {editor.file ? <code>{editor.file}</code> : null} — edits re-validate after a pause
          </label>
          <textarea
            id="yaml-text"
            ref={textarea}
            data-testid="yaml-text"
            spellCheck={false}
            autoCapitalize="off"
            autoComplete="off"
            wrap="off"
            value={text}
            placeholder={'name: my-workflow\nroles:\n  solver: { kind: executor }\nnodes:\n  - id: solve\n    role: solver\n    prompt: "{{task.question}}"'}
            onChange={(e) => setText(e.target.value)}
          />
          <IssuesList issues={issues} />
        </div>
      </div>
    </section>
  );
}

function ValidationChip() {
  const validation = useLab((s) => s.editor.validation);
  const graph = useLab((s) => s.editor.graph);
  if (validation.status === 'idle') return null;
  if (validation.status === 'loading') return <span className="chip" data-testid="validation" role="status">validating…</span>;
  if (validation.status === 'error') return <LoadState state={validation} what="the validation" />;
  return validation.data.ok ? (
    <span className="chip tone-ok" data-testid="validation" data-valid="true" role="status">
      <span aria-hidden="true">✓</span> valid · {validation.data.summary.notation} notation · {countOf(validation.data.summary.nodes.length, 'node')}
    </span>
  ) : (
    <span className="chip tone-bad" data-testid="validation" data-valid="false" role="status">
      <span aria-hidden="true">✗</span> {validation.data.issues.length} issue{validation.data.issues.length === 1 ? '' : 's'}
    </span>
  );
}

function ExamplePicker() {
  const { examples, openExample } = useLabPick('examples', 'openExample');
  const [choice, setChoice] = useState('');
  const list = examples.status === 'ready' ? examples.data : [];
  const chosen = list.find((e) => e.file === choice) ?? list.find((e) => e.file.endsWith('gsm8k-team.yaml')) ?? list[0];
  const select = useRef<HTMLSelectElement>(null);
  useShortcut('openExample', () => {
    if (chosen) openExample(chosen);
    else select.current?.focus();
  });
  if (examples.status === 'error') return <LoadState state={examples} what="examples" />;
  return (
    <form
      className="row"
      onSubmit={(e) => {
        e.preventDefault();
        if (chosen) openExample(chosen);
      }}
    >
      <select ref={select} aria-label="Example workflow" data-testid="example-select" value={chosen?.file ?? ''} onChange={(e) => setChoice(e.target.value)} disabled={!list.length}>
        {!list.length && <option value="">{examples.status === 'loading' ? 'loading examples…' : 'no examples'}</option>}
        {list.map((e) => (
          <option key={e.file} value={e.file}>
            {e.file}
          </option>
        ))}
      </select>
      <button type="submit" data-testid="example-open" disabled={!chosen} title="Open the chosen example (Alt+O)">
        Open example
      </button>
    </form>
  );
}

/** The graph's nodes as buttons: keyboard and test access to what the canvas shows. */
function NodeChips() {
  const graph = useLab((s) => s.editor.graph);
  const selected = useLab((s) => s.editor.selectedNode);
  const selectNode = useLab((s) => s.selectEditorNode);
  if (!graph?.nodes.length) return null;
  return (
    <div className="row wrap node-chips" role="group" aria-label="Nodes">
      <span className="muted small">Nodes</span>
      {graph.nodes.map((n) => (
        <button key={n.id} type="button" className="chip" data-testid={`editor-node-${n.id}`} aria-pressed={n.id === selected} onClick={() => selectNode(n.id === selected ? null : n.id)}>
          {n.id} <span className="muted">{n.role ?? n.kind}</span>
        </button>
      ))}
    </div>
  );
}
