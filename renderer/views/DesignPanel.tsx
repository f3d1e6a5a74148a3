import { useEffect, useMemo, useRef } from 'react';
import type { RunDesign } from '../../core/api/client.ts';
import { designText, formatDocPath, locatePath } from '../lib/designText.ts';

export interface DesignPanelProps {
  design: RunDesign;
  /** Node ids drawn in the graph (an issue's node may be missing when the design could not run). */
  drawn: ReadonlySet<string>;
  /** The node selected in the trace. */
  selectedNode: string | null;
  /** The message chosen (index into design.issues), or null. */
  selectedIssue: number | null;
  /** A message clicked: select it and its node (the issue's node, else the design node). */
  onSelectIssue(index: number | null, nodeId: string | null): void;
}

/**
 * What the designer wrote for this run: the design text with its validation messages. Clicking a
 * message marks its place in the text (its document path, located by designText.ts) and selects
 * its node in the graph; a design-level message selects the design node, which owns it (the
 * Trace view announces a design that cannot run with a banner above the graph).
 */
export function DesignPanel({ design, drawn, selectedNode, selectedIssue, onSelectIssue }: DesignPanelProps) {
  const shown = useMemo(() => designText(design), [design]);
  const issue = selectedIssue === null ? undefined : design.issues[selectedIssue];
  const range = useMemo(() => (issue && shown.source === 'document' ? locatePath(shown.text, issue.path) : undefined), [issue, shown]);
  const mark = useRef<HTMLElement>(null);
  useEffect(() => {
    mark.current?.scrollIntoView?.({ block: 'nearest' });
  }, [range]);

  return (
    <section className="design-panel" aria-labelledby="design-title" data-testid="design-panel">
      <h3 id="design-title">
        Design by <span className="designer-name">{design.designer}</span>{' '}
        <span className="muted small">
          ({design.notation} notation · node <code>{design.nodeId}</code>
          {design.attempt > 1 ? ` · attempt ${design.attempt}` : ''})
        </span>
      </h3>
      {design.fault && (
        <p className="small" data-testid="design-fault">
          <span className="tag sim">SIMULATED</span> a {design.fault.kind} fault was put into node <code>{design.fault.nodeId}</code> before the design was compiled; the text below is the tampered copy.
        </p>
      )}
      <h4>Validation messages ({design.issues.length})</h4>
      {design.issues.length === 0 ? (
        <p className="muted small" data-testid="design-no-issues">
          {design.usable ? 'None: every node the designer wired passed validation.' : 'None: the design did not get as far as validation (the banner above says why).'}
        </p>
      ) : (
        <ol className="design-issues" data-testid="design-issues">
          {design.issues.map((i, k) => {
            const node = i.nodeId ?? null;
            const target = node ?? design.nodeId;
            const atNode = !!selectedNode && (node ?? design.nodeId) === selectedNode;
            return (
              <li key={k} className={`${k === selectedIssue ? 'selected ' : ''}${atNode ? 'at-node' : ''}`}>
                <button
                  type="button"
                  className="issue"
                  data-testid={`design-issue-${k}`}
                  aria-pressed={k === selectedIssue}
                  onClick={() => onSelectIssue(k === selectedIssue ? null : k, k === selectedIssue ? null : drawn.has(target) ? target : null)}
                >
                  <span aria-hidden="true">⚠</span> <code>{i.code}</code> at <code>{formatDocPath(i.path)}</code>
                  <span className="muted small"> · {node ? `node ${node}${drawn.has(node) ? '' : ' (not drawn)'}` : 'the whole design'}</span>
                  <br />
                  <span className="small">{i.message}</span>
                </button>
              </li>
            );
          })}
        </ol>
      )}
      <h4>{shown.source === 'document' ? 'The design as compiled' : 'The design as written'}</h4>
      {shown.note && <p className="muted small">{shown.note}</p>}
      {issue && !range && <p className="muted small" data-testid="design-unlocated">This message has no place in the text shown; its message gives the location.</p>}
      {issue && range && range.depth < issue.path.length && (
        <p className="muted small">
          <code>{formatDocPath(issue.path)}</code> is not in the design; marked: the nearest enclosing part.
        </p>
      )}
      <pre className="value design-text" data-testid="design-text" tabIndex={0} aria-label="Design text">
        {range ? (
          <>
            {shown.text.slice(0, range.start)}
            <mark ref={mark} data-testid="design-mark">
              {shown.text.slice(range.start, range.end)}
            </mark>
            {shown.text.slice(range.end)}
          </>
        ) : (
          shown.text
        )}
      </pre>
      {(design.fault || shown.source === 'document') && design.text !== shown.text && (
        <details className="small">
          <summary>The completion as the designer wrote it{design.fault ? ' (before the SIMULATED fault)' : ''}</summary>
          <pre className="value">{design.text}</pre>
        </details>
      )}
    </section>
  );
}
