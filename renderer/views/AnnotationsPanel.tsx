import { useEffect, useState } from 'react';
import type { RunRecord } from '../../core/api/client.ts';
import { annotationPayload, annotationText, type AnnotationDraft } from '../lib/annotations.ts';
import { useLabPick } from '../useLab.ts';
import { downloadText } from './CardTools.tsx';
import { timestamp } from './format.ts';
import './annotations.css';

/** localStorage key of the author name the form remembers. */
const AUTHOR_KEY = 'flowlab.annotationAuthor';

function savedAuthor(): string {
  try {
    return window.localStorage.getItem(AUTHOR_KEY) ?? '';
  } catch {
    return '';
  }
}

/**
 * A person's scores, tags and notes on the trace's run and its nodes (`flowlab annotate`, stored
 * beside the run): the list, a form that annotates the whole run or the selected node, Remove, and
 * the experiment's annotations as a JSON download (`flowlab annotations <experiment> --json`).
 */
export function AnnotationsPanel({ run, nodeId }: { run: Pick<RunRecord, 'runId' | 'experimentId'>; nodeId: string | null }) {
  const { runAnnotations, annotationError, loadAnnotations, addAnnotation, removeAnnotation, experimentAnnotations } = useLabPick(
    'runAnnotations', 'annotationError', 'loadAnnotations', 'addAnnotation', 'removeAnnotation', 'experimentAnnotations',
  );
  const [draft, setDraft] = useState<AnnotationDraft>(() => ({ target: '', score: '', tags: '', note: '', author: savedAuthor() }));
  const [busy, setBusy] = useState(false);
  useEffect(() => void loadAnnotations(run.runId), [run.runId, loadAnnotations]);
  // The form follows the node selected in the graph or the list (or the run when none is).
  useEffect(() => setDraft((d) => ({ ...d, target: nodeId ?? '' })), [nodeId, run.runId]);
  const list = runAnnotations.status === 'ready' && runAnnotations.runId === run.runId ? runAnnotations.data : [];
  const change = (patch: Partial<AnnotationDraft>) => setDraft((d) => ({ ...d, ...patch }));

  const save = async () => {
    setBusy(true);
    try {
      const author = draft.author.trim() || 'anonymous';
      if (await addAnnotation(annotationPayload(run.runId, { ...draft, author }))) {
        try {
          window.localStorage.setItem(AUTHOR_KEY, author);
        } catch {
          // a page without storage keeps the name for this visit only
        }
        setDraft((d) => ({ ...d, score: '', tags: '', note: '', author }));
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="annotations-title" className="annotations" data-testid="annotations">
      <h3 id="annotations-title">Annotations ({list.length})</h3>
      {list.length === 0 ? (
        <p className="muted small">No one has scored or tagged this run yet.</p>
      ) : (
        <ul className="annotation-list">
          {list.map((a) => (
            <li key={a.id} data-testid={`annotation-${a.id}`} data-node={a.nodeId ?? ''}>
              <strong>{a.nodeId ? <>node <code>{a.nodeId}</code></> : 'run'}</strong>: <span data-testid="annotation-text">{annotationText(a)}</span>{' '}
              <span className="muted small">
                — {a.author}, {timestamp(a.createdAt)} · <code>{a.id}</code>
              </span>{' '}
              <button type="button" className="link" data-testid={`annotation-remove-${a.id}`} onClick={() => void removeAnnotation(a.id, run.runId)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        className="annotation-form row wrap"
        data-testid="annotation-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label>
          On
          <select data-testid="annotation-target" value={draft.target} onChange={(e) => change({ target: e.target.value })}>
            <option value="">the whole run</option>
            {nodeId && <option value={nodeId}>node {nodeId}</option>}
          </select>
        </label>
        <label>
          Score
          <input data-testid="annotation-score" inputMode="decimal" size={6} value={draft.score} placeholder="e.g. 0.5" onChange={(e) => change({ score: e.target.value })} />
        </label>
        <label>
          Tags
          <input data-testid="annotation-tags" size={18} value={draft.tags} placeholder="wrong-plan, arith" onChange={(e) => change({ tags: e.target.value })} />
        </label>
        <label className="grow">
          Note
          <input data-testid="annotation-note" value={draft.note} placeholder="what you saw" onChange={(e) => change({ note: e.target.value })} />
        </label>
        <label>
          Author
          <input data-testid="annotation-author" size={10} value={draft.author} placeholder="your name" onChange={(e) => change({ author: e.target.value })} />
        </label>
        <button type="submit" className="primary" data-testid="annotation-save" disabled={busy}>
          Save
        </button>
        <button
          type="button"
          data-testid="annotations-download"
          title="Every annotation of this experiment's runs as JSON (what flowlab annotations <experiment> --json prints)"
          onClick={async () => {
            const all = await experimentAnnotations(run.experimentId);
            if (all) downloadText(`annotations-${run.experimentId}.json`, `${JSON.stringify(all, null, 2)}\n`);
          }}
        >
          Download JSON
        </button>
      </form>
      {annotationError && (
        <p className="error small" role="alert" data-testid="annotation-error">
          {annotationError}
        </p>
      )}
    </section>
  );
}
