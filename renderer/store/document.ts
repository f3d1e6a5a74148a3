/**
 * The editor's text as a document: where it came from, whether it has unsaved changes, opening
 * another one (an example, a saved workflow, a file from the user's disk) with a prompt before
 * unsaved work is replaced, and saving to the host's workflows folder (Save, Save as; the host
 * confines names to that folder, host/workflowFiles.ts). "Unsaved" compares a hash of the text
 * with the hash of the text last opened or saved, so typing a change and typing it back is clean.
 */
import type { WorkflowFileList } from '../../core/api/client.ts';
import { IDLE, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

/** Where the open document came from. */
export type DocumentOrigin = 'new' | 'example' | 'saved' | 'file' | 'draft';

/** What the editor's text is, as a document. */
export interface WorkflowDocument {
  /** Its file in the host's workflows folder (Save writes there), or null when it has none yet. */
  name: string | null;
  /** Hash (`textHash`) of the text as last opened or saved: the baseline of "unsaved changes". */
  savedHash: string;
  origin: DocumentOrigin;
  /** What to call it in messages: the saved name, the example's or the file's name. */
  label: string | null;
  /** When it was last saved to the workflows folder (epoch ms), if it was. */
  savedAt: number | null;
}

/** A document to open: what `openDocument` takes. */
export interface OpenRequest {
  text: string;
  /** Used in issue locations (an example's `examples/x.yaml`, a file's name). */
  file: string | null;
  /** Its name in the workflows folder, when opened from there. */
  name: string | null;
  origin: DocumentOrigin;
  label: string | null;
}

export interface DocumentSlice {
  workflowDoc: WorkflowDocument;
  /** An open waiting for the user's answer because it would replace unsaved changes. */
  pendingOpen: OpenRequest | null;
  /** The workflows folder's files (Open saved). */
  workflowFiles: Loadable<WorkflowFileList>;
  /** A save in flight. */
  saving: boolean;
  /** Why the last save failed (shown beside Save), with the name when it already exists. */
  saveError: { message: string; exists?: string } | null;
  /** Whether the text differs from the document as last opened or saved. */
  documentDirty(): boolean;
  /** Opens a document; with unsaved changes it waits for `confirmOpen` (unless `force`). */
  openDocument(doc: OpenRequest, force?: boolean): void;
  confirmOpen(): void;
  cancelOpen(): void;
  /** Opens a file of the workflows folder by name. */
  openSavedWorkflow(name: string): Promise<void>;
  /** Opens a file the user picked on their disk (upload, or the desktop app's dialog). */
  openLocalFile(fileName: string, text: string): void;
  /** Lists the workflows folder. */
  loadWorkflowFiles(): Promise<void>;
  /** Save: to the document's own name (false: it has none yet, ask for one and call saveDocumentAs). */
  saveDocument(): Promise<boolean>;
  /** Save as `name` in the workflows folder; `overwrite` replaces a file of that name. */
  saveDocumentAs(name: string, overwrite?: boolean): Promise<boolean>;
  /** Marks the restored text's document (drafts, store/draft.ts). */
  setWorkflowDoc(doc: WorkflowDocument): void;
}

declare module './types.ts' {
  interface LabState extends DocumentSlice {}
}

/**
 * A short hash of a text (cyrb53: two 32-bit multiply-xorshift lanes over UTF-16 code units,
 * by bryc, public domain), as hex. Not cryptographic: it only tells "same text" from "changed".
 */
export function textHash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16);
}

/** The document of an empty editor. */
export const NEW_DOCUMENT: WorkflowDocument = { name: null, savedHash: textHash(''), origin: 'new', label: null, savedAt: null };

/** A file name to suggest for Save as / Download: the document's, else the workflow's `name:` (letters kept), else `workflow.yaml`. */
export function suggestedFileName(text: string, doc: WorkflowDocument, file: string | null): string {
  if (doc.name) return doc.name;
  const base = file ? file.split(/[\\/]/).pop() : undefined;
  if (base && /\.ya?ml$/i.test(base)) return base;
  const name = /^name:\s*["']?([^"'\n#]+)/m.exec(text)?.[1]?.trim();
  const clean = name?.replace(/[^A-Za-z0-9_. -]+/g, '-').replace(/^[^A-Za-z0-9_]+/, '').replace(/\.\.+/g, '.').slice(0, 100);
  return `${clean || 'workflow'}.yaml`;
}

/** An API error message without its leading method name (`saveWorkflowFile: ...`): the user's words. */
function plain(message: string): string {
  const m = /^[a-z][A-Za-z]+: (.*)$/s.exec(message);
  return m ? m[1]! : message;
}

export function createDocumentSlice({ api, set, get }: SliceContext): DocumentSlice {
  const open = (doc: OpenRequest) => {
    get().loadText(doc.text, doc.file);
    set({ workflowDoc: { name: doc.name, savedHash: textHash(doc.text), origin: doc.origin, label: doc.label, savedAt: null }, pendingOpen: null, saveError: null });
  };

  return {
    workflowDoc: NEW_DOCUMENT,
    pendingOpen: null,
    workflowFiles: IDLE,
    saving: false,
    saveError: null,

    documentDirty() {
      return textHash(get().editor.text) !== get().workflowDoc.savedHash;
    },

    openDocument(doc, force = false) {
      if (!force && get().documentDirty()) {
        set({ pendingOpen: doc });
        return;
      }
      open(doc);
      get().notify(null);
    },

    confirmOpen() {
      const doc = get().pendingOpen;
      if (doc) open(doc);
    },

    cancelOpen() {
      set({ pendingOpen: null });
    },

    async openSavedWorkflow(name) {
      const file = await load(() => api.readWorkflowFile({ name }));
      if (file.status !== 'ready') {
        get().notify(`Could not open ${name}: ${file.status === 'error' ? plain(file.message) : 'no answer'}`, 'error');
        return;
      }
      get().openDocument({ text: file.data.text, file: name, name, origin: 'saved', label: name });
    },

    openLocalFile(fileName, text) {
      get().openDocument({ text, file: fileName, name: null, origin: 'file', label: fileName });
    },

    async loadWorkflowFiles() {
      if (get().workflowFiles.status !== 'ready') set({ workflowFiles: LOADING });
      set({ workflowFiles: await load(() => api.listWorkflowFiles()) });
    },

    async saveDocument() {
      const name = get().workflowDoc.name;
      if (!name) return false;
      return get().saveDocumentAs(name, true);
    },

    async saveDocumentAs(name, overwrite = false) {
      if (get().saving) return false;
      const text = get().editor.text;
      set({ saving: true, saveError: null });
      const saved = await load(() => api.saveWorkflowFile({ name, text, ...(overwrite ? { overwrite: true } : {}) }));
      set({ saving: false });
      if (saved.status !== 'ready') {
        const message = saved.status === 'error' ? plain(saved.message) : 'no answer';
        set({ saveError: saved.status === 'error' && saved.code === 'BUSY' ? { message, exists: name } : { message } });
        return false;
      }
      // The text may have changed while the save was in flight: the baseline is what was saved.
      set({ workflowDoc: { name: saved.data.name, savedHash: textHash(text), origin: 'saved', label: saved.data.name, savedAt: saved.data.modifiedAt } });
      if (get().editor.file !== saved.data.name) set({ editor: { ...get().editor, file: saved.data.name } });
      get().notify(`✓ Saved ${saved.data.name} in the workflows folder.`);
      void get().loadWorkflowFiles();
      return true;
    },

    setWorkflowDoc(doc) {
      set({ workflowDoc: doc });
    },
  };
}
