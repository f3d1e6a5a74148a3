import { useEffect, useMemo, useState } from 'react';
import { ApiError, errorMessage, isDownloadEvent, type DownloadEvent } from '../../core/api/client.ts';
import { createApiClient, subscribe } from '../api.ts';
import { userMessage } from '../lib/messages.ts';
import { useLabPick } from '../useLab.ts';
import { bytes } from './format.ts';

/** What the form shows of one download, folded from its `DownloadEvent`s (core/api/downloads.ts). */
export interface DownloadView {
  fileName?: string;
  status: 'running' | 'completed' | 'cancelled' | 'failed';
  bytes: number;
  total?: number;
  message?: string;
}

/** `view` with `event` applied (pure): progress moves the bytes; an opening or closing event sets the status. */
export function foldDownload(view: DownloadView | undefined, event: DownloadEvent): DownloadView {
  const base: DownloadView = view ?? { status: 'running', bytes: 0 };
  const total = event.total !== undefined ? { total: event.total } : base.total !== undefined ? { total: base.total } : {};
  if (event.type === 'downloadProgress') return base.status === 'running' ? { ...base, bytes: event.bytes, ...total } : base;
  return { fileName: event.fileName, status: event.status, bytes: event.bytes, ...total, ...(event.message !== undefined && { message: event.message }) };
}

/**
 * The Models view's download form: a source (`hf:` reference or http(s) URL) and an optional
 * sha256, started with `startDownload` into the lab's models folder; a progress bar fed by the
 * pushed `DownloadEvent`s, Cancel, errors in the user's words, and a rescan of the model list
 * when the file is in place.
 */
export function DownloadModel({ request }: { request?: { source: string; n: number } | undefined } = {}) {
  const api = useMemo(() => createApiClient(), []);
  const { loadModels } = useLabPick('loadModels');
  const [source, setSource] = useState('');
  const [sha256, setSha256] = useState('');
  const [downloadId, setDownloadId] = useState<string | null>(null);
  const [views, setViews] = useState<Record<string, DownloadView>>({});
  const [error, setError] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);

  // Events may arrive before startDownload answers: keep every download's, show ours.
  useEffect(
    () => subscribe((e) => {
      if (isDownloadEvent(e)) setViews((v) => ({ ...v, [e.downloadId]: foldDownload(v[e.downloadId], e) }));
    }),
    [],
  );
  const view = downloadId ? views[downloadId] : undefined;
  useEffect(() => {
    if (view?.status === 'completed') void loadModels();
  }, [view?.status, loadModels]);

  const running = starting || view?.status === 'running';
  const start = async (from: string = source.trim(), hash: string = sha256.trim()) => {
    setError(null);
    setStarting(true);
    try {
      const { downloadId: id } = await api.startDownload({ source: from, ...(hash && { sha256: hash }) });
      setDownloadId(id);
    } catch (err) {
      setError(userMessage(err instanceof ApiError ? err : { message: errorMessage(err) }));
    } finally {
      setStarting(false);
    }
  };
  // A one-click download from the catalogue (ModelsView): fill the form and start it.
  useEffect(() => {
    if (!request) return;
    setSource(request.source);
    setSha256('');
    void start(request.source, '');
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs once per request
  }, [request?.n]);
  const cancel = async () => {
    if (!downloadId) return;
    try {
      await api.cancelDownload({ downloadId });
    } catch (err) {
      setError(userMessage(err instanceof ApiError ? err : { message: String(err) }));
    }
  };

  return (
    <form
      className="row wrap add-model"
      data-testid="download-form"
      onSubmit={(e) => {
        e.preventDefault();
        void start();
      }}
    >
      <label className="row grow">
        <span>Download a GGUF</span>
        <input className="grow" data-testid="download-source" placeholder="hf:owner/repo/model-q8_0.gguf or https://…/model.gguf" value={source} onChange={(e) => setSource(e.target.value)} />
      </label>
      <label className="row">
        <span>sha256 (optional)</span>
        <input data-testid="download-sha256" size={20} placeholder="64 hex digits" value={sha256} onChange={(e) => setSha256(e.target.value)} />
      </label>
      <button type="submit" data-testid="download-start" disabled={!source.trim() || running}>
        {starting ? 'Starting…' : 'Download'}
      </button>
      {view && (
        <div className="progress" style={{ flexBasis: '100%' }} data-testid="download-status" data-status={view.status}>
          <p className="small">
            {view.fileName && <code>{view.fileName}</code>} {view.status === 'running' ? 'downloading' : view.status === 'completed' ? '✓ downloaded and checked; it is in the list below' : view.status}
            {' · '}
            <span data-testid="download-bytes">{view.total !== undefined ? `${bytes(view.bytes)} of ${bytes(view.total)}` : bytes(view.bytes)}</span>
          </p>
          {view.status === 'running' && <progress max={Math.max(1, view.total ?? 0)} {...(view.total !== undefined && { value: view.bytes })} aria-label="download progress" />}
          {view.status === 'running' && (
            <button type="button" data-testid="download-cancel" onClick={() => void cancel()}>
              Cancel
            </button>
          )}
          {view.message && (view.status === 'failed' || view.status === 'cancelled') && (
            <p className={`note small ${view.status === 'failed' ? 'error' : ''}`} role={view.status === 'failed' ? 'alert' : 'status'} data-testid="download-message">
              {view.status === 'failed' && <span aria-hidden="true">✗ </span>}
              {view.message}
            </p>
          )}
        </div>
      )}
      {error && (
        <p className="note error small" role="alert" data-testid="download-error">
          <span aria-hidden="true">✗</span> {error}
        </p>
      )}
    </form>
  );
}
