/**
 * The editor's draft, kept across reloads and restarts in the page's `localStorage` (the
 * browser host's origin, or the desktop app's `app://flowlab` origin): the text, where it came
 * from, the hash of its saved version (so "unsaved changes" survives a reload) and the undo and
 * redo diffs (small: changed lines only, lib/editDiff.ts). Written a short quiet time after each
 * change and when the page is hidden; read once at start-up. Nothing is sent anywhere.
 */
import type { StoreApi } from 'zustand/vanilla';
import { isEditDiff, type EditDiff } from '../lib/editDiff.ts';
import type { DocumentOrigin, WorkflowDocument } from './document.ts';
import type { LabState } from './types.ts';

/** The localStorage key of the draft. */
export const DRAFT_KEY = 'flowlab.editor.draft.v1';
/** Quiet time after the last change before the draft is written, in ms. */
export const DRAFT_DEBOUNCE_MS = 400;

/** What is kept. */
export interface Draft {
  v: 1;
  text: string;
  file: string | null;
  doc: WorkflowDocument;
  undo: EditDiff[];
  redo: EditDiff[];
  /** When it was written, epoch ms. */
  at: number;
}

/** The part of `Storage` the draft uses (localStorage; a Map in tests). */
export interface DraftStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

const ORIGINS: readonly DocumentOrigin[] = ['new', 'example', 'saved', 'file', 'draft'];

/** The draft of the store's state now. */
export function draftOf(s: LabState, now: number): Draft {
  return { v: 1, text: s.editor.text, file: s.editor.file, doc: s.workflowDoc, undo: s.editor.undo, redo: s.editor.redo, at: now };
}

/** Reads a stored draft back; null when there is none or it is not one (a damaged value is ignored, not fatal). */
export function parseDraft(raw: string | null): Draft | null {
  if (!raw) return null;
  let d: unknown;
  try {
    d = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!d || typeof d !== 'object') return null;
  const x = d as Record<string, unknown>;
  const doc = x.doc as Record<string, unknown> | undefined;
  const str = (v: unknown) => typeof v === 'string';
  const strOrNull = (v: unknown) => v === null || typeof v === 'string';
  if (x.v !== 1 || !str(x.text) || !strOrNull(x.file) || !doc || typeof doc !== 'object') return null;
  if (!strOrNull(doc.name) || !str(doc.savedHash) || !ORIGINS.includes(doc.origin as DocumentOrigin) || !strOrNull(doc.label) || !(doc.savedAt === null || typeof doc.savedAt === 'number')) return null;
  const diffs = (v: unknown) => (Array.isArray(v) && v.every(isEditDiff) ? v : []);
  return { v: 1, text: x.text as string, file: x.file as string | null, doc: doc as unknown as WorkflowDocument, undo: diffs(x.undo), redo: diffs(x.redo), at: typeof x.at === 'number' ? x.at : 0 };
}

/** Puts a stored draft (if any) into the editor. Returns whether one was restored. */
export function restoreDraft(store: StoreApi<LabState>, storage: DraftStorage): boolean {
  let raw: string | null;
  try {
    raw = storage.getItem(DRAFT_KEY);
  } catch {
    return false; // storage unavailable (private mode): nothing to restore
  }
  const draft = parseDraft(raw);
  if (!draft) return false;
  const s = store.getState();
  s.loadText(draft.text, draft.file, { undo: draft.undo, redo: draft.redo });
  s.setWorkflowDoc(draft.doc);
  return true;
}

/**
 * Writes the draft after each change of the editor's text, file, history or document (after
 * DRAFT_DEBOUNCE_MS of quiet), and at once on `flush()`, which first records the open burst of
 * typing in the undo history (`commitTyping`). A full storage drops the undo history
 * first, then gives up quietly (the text stays in the page). Returns `{flush, stop}`.
 */
export function keepDraft(
  store: StoreApi<LabState>,
  storage: DraftStorage,
  delay: (fn: () => void, ms: number) => () => void,
  now: () => number = Date.now,
): { flush(): void; stop(): void } {
  let cancel: (() => void) | null = null;
  const write = () => {
    cancel = null;
    const draft = draftOf(store.getState(), now());
    try {
      storage.setItem(DRAFT_KEY, JSON.stringify(draft));
    } catch {
      try {
        storage.setItem(DRAFT_KEY, JSON.stringify({ ...draft, undo: [], redo: [] }));
      } catch {
        // No room even for the text: keep it in the page only.
      }
    }
  };
  const unsubscribe = store.subscribe((s, prev) => {
    if (s.editor.text === prev.editor.text && s.editor.file === prev.editor.file && s.editor.undo === prev.editor.undo && s.editor.redo === prev.editor.redo && s.workflowDoc === prev.workflowDoc) return;
    cancel?.();
    cancel = delay(write, DRAFT_DEBOUNCE_MS);
  });
  return {
    flush() {
      // The open burst of typing joins the undo history first, so a reload right after typing
      // keeps it undoable (it would otherwise join only after the text went quiet).
      store.getState().commitTyping();
      if (!cancel) return;
      cancel();
      write();
    },
    stop() {
      cancel?.();
      cancel = null;
      unsubscribe();
    },
  };
}
