import { useEffect, useRef, useState } from 'react';
import { errorMessage, WORKFLOW_FILE_NAME } from '../../../core/api/client.ts';
import { suggestedFileName } from '../../store/document.ts';
import { useLab, useLabPick } from '../../useLab.ts';
import './document.css';

/** Largest file the Open button reads from the user's disk, in bytes (the host's limit for a document). */
const MAX_OPEN_BYTES = 4 << 20;

/**
 * The editor's document controls: Open (a file from the user's disk: the desktop app's dialog,
 * or an upload in a browser), Open saved (the host's workflows folder), Save, Save as, Download,
 * Undo and Redo, and whether the text has unsaved changes.
 */
export function DocumentBar() {
  const s = useLabPick('editor', 'workflowDoc', 'saving', 'saveError', 'workflowFiles', 'undo', 'redo', 'saveDocument', 'saveDocumentAs', 'openLocalFile', 'openSavedWorkflow', 'loadWorkflowFiles', 'notify', 'documentDirty', 'serverDown');
  const dirty = s.documentDirty();
  const [saveAs, setSaveAs] = useState<string | null>(null);
  const upload = useRef<HTMLInputElement>(null);
  const { loadWorkflowFiles } = s;
  useEffect(() => {
    void loadWorkflowFiles();
  }, [loadWorkflowFiles]);

  const suggested = suggestedFileName(s.editor.text, s.workflowDoc, s.editor.file);
  const openFile = async () => {
    const pick = window.flowlab?.pickWorkflowFile;
    if (pick) {
      try {
        const file = await pick();
        if (file) s.openLocalFile(file.name, file.text);
      } catch (err) {
        s.notify(`Could not open the file: ${errorMessage(err)}`, 'error');
      }
      return;
    }
    upload.current?.click();
  };
  const onUpload = async (files: FileList | null) => {
    const file = files?.[0];
    if (upload.current) upload.current.value = '';
    if (!file) return;
    if (file.size > MAX_OPEN_BYTES) return s.notify(`${file.name} is ${file.size} bytes, over the ${MAX_OPEN_BYTES}-byte limit of a workflow document.`, 'error');
    s.openLocalFile(file.name, await file.text());
  };
  const save = async () => {
    if (!(await s.saveDocument())) setSaveAs((v) => v ?? suggested);
  };
  const download = () => {
    const url = URL.createObjectURL(new Blob([s.editor.text], { type: 'text/yaml;charset=utf-8' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = suggested;
    a.click();
    window.setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  const saved = s.workflowFiles.status === 'ready' ? s.workflowFiles.data.files : [];
  const nameOk = saveAs !== null && WORKFLOW_FILE_NAME.test(saveAs.trim());
  const offline = s.serverDown;

  return (
    <div className="doc-bar" role="toolbar" aria-label="Document">
      <button type="button" data-testid="doc-open-file" onClick={() => void openFile()} title="Open a workflow file from your disk">
        Open file…
      </button>
      <input ref={upload} type="file" accept=".yaml,.yml,.json,text/yaml,application/json" hidden data-testid="doc-upload" onChange={(e) => void onUpload(e.target.files)} />
      <select
        aria-label="Open a saved workflow"
        data-testid="doc-open-saved"
        value=""
        disabled={!saved.length || offline}
        onChange={(e) => e.target.value && void s.openSavedWorkflow(e.target.value)}
        title={s.workflowFiles.status === 'ready' ? `Workflows folder: ${s.workflowFiles.data.folder}` : undefined}
      >
        <option value="">{saved.length ? 'Open saved…' : 'no saved workflows'}</option>
        {saved.map((f) => (
          <option key={f.name} value={f.name}>
            {f.name}
          </option>
        ))}
      </select>
      <button type="button" data-testid="doc-save" onClick={() => void save()} disabled={s.saving || offline} title={s.workflowDoc.name ? `Save to ${s.workflowDoc.name} in the workflows folder` : 'Save in the workflows folder (asks for a name)'}>
        Save
      </button>
      <button type="button" data-testid="doc-save-as" onClick={() => setSaveAs(suggested)} disabled={s.saving || offline}>
        Save as…
      </button>
      <button type="button" data-testid="doc-download" onClick={download} disabled={!s.editor.text} title={`Download as ${suggested}`}>
        Download
      </button>
      <button type="button" data-testid="undo-edit" onClick={s.undo} disabled={!s.editor.undo.length} title="Undo the last edit (Alt+Z)">
        Undo
      </button>
      <button type="button" data-testid="redo-edit" onClick={s.redo} disabled={!s.editor.redo.length} title="Redo the last edit undone">
        Redo
      </button>
      <span className={`chip ${dirty ? 'tone-warn' : 'muted'}`} data-testid="doc-state" data-dirty={dirty ? 'true' : 'false'} role="status">
        {dirty ? '● unsaved changes' : s.workflowDoc.name ? `saved: ${s.workflowDoc.name}` : s.workflowDoc.label ? `opened: ${s.workflowDoc.label}` : 'new document'}
      </span>
      {saveAs !== null && (
        <form
          className="row doc-save-as"
          onSubmit={(e) => {
            e.preventDefault();
            if (nameOk) void s.saveDocumentAs(saveAs.trim()).then((ok) => ok && setSaveAs(null));
          }}
        >
          <label>
            Save as <input data-testid="doc-save-name" value={saveAs} onChange={(e) => setSaveAs(e.target.value)} autoFocus size={28} />
          </label>
          <button type="submit" data-testid="doc-save-confirm" disabled={!nameOk || s.saving || offline}>
            Save
          </button>
          <button type="button" onClick={() => setSaveAs(null)}>
            Cancel
          </button>
          {!nameOk && <span className="small tone-bad">A name ending in .yaml or .yml: letters, digits, spaces, _ - and . only.</span>}
        </form>
      )}
      {s.saveError && (
        <p className="note error" role="alert" data-testid="doc-save-error">
          ✗ Not saved: {s.saveError.message}
          {s.saveError.exists && (
            <button type="button" className="link" data-testid="doc-save-replace" onClick={() => void s.saveDocumentAs(s.saveError!.exists!, true).then((ok) => ok && setSaveAs(null))}>
              Replace {s.saveError.exists}
            </button>
          )}
        </p>
      )}
    </div>
  );
}

/** The prompt before an open replaces unsaved changes. */
export function OpenPrompt() {
  const { pendingOpen, workflowDoc, confirmOpen, cancelOpen } = useLabPick('pendingOpen', 'workflowDoc', 'confirmOpen', 'cancelOpen');
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (pendingOpen) keep.current?.focus();
  }, [pendingOpen]);
  const file = useLab((st) => st.editor.file);
  if (!pendingOpen) return null;
  const current = workflowDoc.label ?? file ?? 'the current workflow';
  return (
    <div className="doc-prompt" role="alertdialog" aria-modal="true" aria-labelledby="doc-prompt-title" data-testid="unsaved-prompt" onKeyDown={(e) => e.key === 'Escape' && cancelOpen()}>
      <h3 id="doc-prompt-title">Replace unsaved changes?</h3>
      <p>
        {current} has changes that are not saved. Opening {pendingOpen.label ?? 'the other workflow'} replaces them. (The draft in this browser is replaced too.)
      </p>
      <div className="row">
        <button ref={keep} type="button" data-testid="unsaved-keep" onClick={cancelOpen}>
          Keep editing
        </button>
        <button type="button" className="danger" data-testid="unsaved-discard" onClick={confirmOpen}>
          Discard changes and open
        </button>
      </div>
    </div>
  );
}
