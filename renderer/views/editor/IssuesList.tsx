import type { LocatedIssue } from '../../lib/issues.ts';
import { useLabPick } from '../../useLab.ts';

/** Validation issues with line:column and path; clicking one selects its node and moves the caret there. */
export function IssuesList({ issues }: { issues: LocatedIssue[] }) {
  const { selectEditorNode: selectNode, selectEditorEdge: selectEdge, moveCaret } = useLabPick('selectEditorNode', 'selectEditorEdge', 'moveCaret');
  if (!issues.length) return null;
  return (
    <section className="issues" aria-labelledby="issues-title">
      <h3 id="issues-title">
        <span aria-hidden="true">✗</span> {issues.length} issue{issues.length === 1 ? '' : 's'}
      </h3>
      <ol data-testid="issues">
        {issues.map((l, i) => (
          <li key={i}>
            <button
              type="button"
              className="issue"
              data-testid={`issue-${i}`}
              onClick={() => {
                if (l.nodeId) selectNode(l.nodeId, false);
                else if (l.edgeId) selectEdge(l.edgeId);
                if (l.issue.line) moveCaret(l.issue.line, l.issue.column ?? 1, true);
              }}
            >
              <code className="where">{l.where || '—'}</code>
              {l.pathText && <code className="path">{l.pathText}</code>}
              <span className="msg">{l.issue.message}</span>
              <span className="code muted">[{l.issue.code}]</span>
              {l.nodeId && <span className="tag">node {l.nodeId}</span>}
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}
