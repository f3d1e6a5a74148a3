/**
 * The workflow editor: the YAML text (the source of truth), the graph drawn from it, the host's
 * validation (debounced; an answer for text that has changed since is dropped), the selection,
 * graph edits (rewrite the text through the yaml Document API), undo and redo of every edit as
 * line diffs (lib/editDiff.ts), and the model picked per role (used by the Run view). Opening
 * and saving documents is the document slice's (document.ts).
 */
import { withEditorLints } from '../lib/editorLints.ts';
import { datasetForWorkflow, trainDatasetForWorkflow } from '../lib/datasetChoice.ts';
import { splitFor } from './run.ts';
import type { ExampleWorkflow } from '../../core/api/lab.ts';
import type { ValidateWorkflowResult } from '../../core/api/client.ts';
import { applyDiff, diffSize, diffText, invertDiff, isEmptyDiff, type EditDiff } from '../lib/editDiff.ts';
import { applyGraphEdit, type GraphEdit } from '../lib/graphEdits.ts';
import { parseWorkflowGraph, type DocGraph } from '../lib/workflowGraph.ts';
import { IDLE, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

/** Quiet time after the last keystroke before the text is re-parsed and validated. */
export const VALIDATE_DEBOUNCE_MS = 300;
/** Edits kept for undo (and for redo). */
export const UNDO_DEPTH = 100;
/** Characters of changed lines kept in the undo and redo stacks together; the oldest edits go first. */
export const UNDO_CHARS = 1_000_000;

export interface EditorState {
  text: string;
  /** Where the text came from (an example's file), used in issue locations. */
  file: string | null;
  /** The graph of the last text that parsed as YAML (kept while the text does not parse). */
  graph: DocGraph | null;
  /** Set while the current text is not YAML at all. */
  parseError: { message: string; line?: number; column?: number } | null;
  validation: Loadable<ValidateWorkflowResult>;
  selectedNode: string | null;
  selectedEdge: string | null;
  /** A request to move the textarea's caret; `nonce` makes repeated requests distinct. */
  caret: { line: number; column: number; focus: boolean; nonce: number } | null;
  /**
   * Edits that undo can take back, oldest first, as line diffs (lib/editDiff.ts): one per graph
   * edit, one per burst of typing (recorded when the text goes quiet, VALIDATE_DEBOUNCE_MS).
   */
  undo: EditDiff[];
  /** Edits undone, that redo can apply again, newest undone last; a new edit clears them. */
  redo: EditDiff[];
}

export interface EditorSlice {
  editor: EditorState;
  /** Model file per role for the Run view (role -> GGUF path). */
  roleModels: Record<string, string>;
  /** The model for roles without their own. */
  defaultModel: string | null;
  /** Replaces the text (typing): re-parse and validation follow after a quiet time. */
  setText(text: string): void;
  /** Loads a whole document (example, file): parsed and validated at once; clears selection and undo. */
  loadText(text: string, file: string | null, history?: { undo: EditDiff[]; redo: EditDiff[] }): void;
  openExample(example: ExampleWorkflow): void;
  /** Parses and validates the current text now (the debounce calls this). */
  validateNow(): Promise<void>;
  /**
   * Records the typing since the last undo point as one edit now, without waiting for the text to
   * go quiet (a page about to be hidden or reloaded: store/draft.ts `flush`). No-op when nothing was typed.
   */
  commitTyping(): void;
  /** Applies a graph edit to the text; false (with a notice) when it cannot apply. */
  editGraph(edit: GraphEdit): boolean;
  /** Takes back the last edit (graph edit or burst of typing); the same as `undo`. */
  undoGraphEdit(): void;
  /** Takes back the last edit: its diff is applied inverted to the text. */
  undo(): void;
  /** Applies again the last edit undone. */
  redo(): void;
  /** Selects a node (null: none); moves the caret to its entry unless told not to. */
  selectEditorNode(id: string | null, moveCaret?: boolean): void;
  selectEditorEdge(id: string | null): void;
  /** Moves the textarea's caret to `line`:`column`; `focus` also focuses the text. */
  moveCaret(line: number, column?: number, focus?: boolean): void;
  setRoleModel(role: string, path: string | null): void;
  setDefaultModel(path: string | null): void;
}

/** Adds this slice to the lab state (store/types.ts). */
declare module './types.ts' {
  interface LabState extends EditorSlice {}
}

const EMPTY_EDITOR: EditorState = { text: '', file: null, graph: null, parseError: null, validation: IDLE, selectedNode: null, selectedEdge: null, caret: null, undo: [], redo: [] };

/** Keeps the newest edits within UNDO_DEPTH entries and UNDO_CHARS characters. */
function capHistory(stack: EditDiff[], other: readonly EditDiff[] = []): EditDiff[] {
  let out = stack.slice(-UNDO_DEPTH);
  let chars = [...out, ...other].reduce((n, d) => n + diffSize(d), 0);
  while (out.length > 1 && chars > UNDO_CHARS) {
    chars -= diffSize(out[0]!);
    out = out.slice(1);
  }
  return out;
}

export function createEditorSlice({ api, set, get, deps }: SliceContext): EditorSlice {
  let cancelTimer: (() => void) | null = null;
  let caretNonce = 0;
  const patch = (p: Partial<EditorState>) => set({ editor: { ...get().editor, ...p } });
  /** The text at the last point recorded in the undo history. */
  let checkpoint = '';

  /** Records the typing since the last checkpoint as one undoable edit (clears redo). */
  const recordTyping = () => {
    const { text, undo } = get().editor;
    if (text === checkpoint) return;
    const d = diffText(checkpoint, text);
    checkpoint = text;
    if (!isEmptyDiff(d)) patch({ undo: capHistory([...undo, d]), redo: [] });
  };

  /** Moves one edit between the stacks: `back` undoes the newest edit, else redoes the newest undone. */
  const step = (back: boolean) => {
    recordTyping();
    const { undo, redo, text } = get().editor;
    const from = back ? undo : redo;
    const d = from[from.length - 1];
    if (!d) {
      get().notify(back ? 'Nothing to undo.' : 'Nothing to redo.');
      return;
    }
    let next: string;
    try {
      next = applyDiff(text, back ? invertDiff(d) : d);
    } catch (err) {
      // The text no longer matches the history (cannot happen through the editor's own actions).
      patch({ undo: [], redo: [] });
      get().notify(`Cannot ${back ? 'undo' : 'redo'}: ${(err as Error).message}; the edit history was cleared.`, 'error');
      return;
    }
    checkpoint = next;
    patch(back ? { text: next, undo: undo.slice(0, -1), redo: [...redo, d] } : { text: next, redo: redo.slice(0, -1), undo: [...undo, d] });
    void get().validateNow();
  };

  /** Re-parses the current text into the graph (keeping the last graph on a parse error). */
  const reparse = () => {
    const { text } = get().editor;
    const parsed = parseWorkflowGraph(text);
    if (parsed.ok) {
      const graph = parsed.graph;
      const { selectedNode, selectedEdge } = get().editor;
      patch({
        graph,
        parseError: null,
        selectedNode: selectedNode && graph.nodes.some((n) => n.id === selectedNode) ? selectedNode : null,
        selectedEdge: selectedEdge && graph.edges.some((e) => e.id === selectedEdge) ? selectedEdge : null,
      });
    } else {
      patch({ parseError: { message: parsed.message, line: parsed.line, column: parsed.column } });
    }
  };

  const scheduleValidation = (ms: number) => {
    cancelTimer?.();
    cancelTimer = deps.delay(() => {
      cancelTimer = null;
      void get().validateNow();
    }, ms);
  };

  return {
    editor: EMPTY_EDITOR,
    roleModels: {},
    defaultModel: null,

    commitTyping() {
      recordTyping();
    },

    setText(text) {
      if (text === get().editor.text) return;
      patch({ text });
      scheduleValidation(VALIDATE_DEBOUNCE_MS);
    },

    loadText(text, file, history) {
      cancelTimer?.();
      cancelTimer = null;
      checkpoint = text;
      set({ editor: { ...EMPTY_EDITOR, text, file, ...(history ? { undo: capHistory(history.undo, history.redo), redo: history.redo.slice(-UNDO_DEPTH) } : {}) } });
      void get().validateNow();
    },

    openExample(example) {
      // Through the document slice: unsaved changes are not replaced without asking.
      get().openDocument({ text: example.text, file: example.file, name: null, origin: 'example', label: example.file });
      if (get().editor.text !== example.text) return; // the user kept their draft
      // The Run form's dataset: the one this workflow was last run with, else the one its comments name (as the CLI is told).
      const s = get();
      const datasets = s.datasets.status === 'ready' ? s.datasets.data : [];
      const name = datasetForWorkflow(example.text, s.editor.graph?.name ?? example.name, s.experiments.status === 'ready' ? s.experiments.data : [], datasets);
      const d = datasets.find((x) => x.name === name);
      if (d && d.name !== s.runForm.dataset) s.setRunForm({ dataset: d.name, split: splitFor(d.name, d.splits, s.runForm.splitByDataset) });
      // The Learning form's: the one its `train-loop` line names, else the Run form's when it has the training split.
      const train = trainDatasetForWorkflow(example.text, s.editor.graph?.name ?? example.name, s.experiments.status === 'ready' ? s.experiments.data : [], datasets, s.trainLoopForm.split);
      if (train !== undefined && train !== s.trainLoopForm.dataset) s.setTrainLoopForm({ dataset: train });
    },

    async validateNow() {
      cancelTimer?.();
      cancelTimer = null;
      recordTyping();
      reparse();
      const { text, file } = get().editor;
      if (!text.trim()) {
        patch({ validation: IDLE });
        return;
      }
      if (get().editor.validation.status !== 'ready') patch({ validation: LOADING });
      const validation = await load(() => api.validateWorkflow(file ? { text, file } : { text }));
      // Drop an answer about text the user has changed since.
      if (get().editor.text !== text) return;
      patch({ validation: validation.status === 'ready' ? { ...validation, data: withEditorLints(validation.data, text) } : validation });
    },

    editGraph(edit) {
      recordTyping();
      const before = get().editor.text;
      const result = applyGraphEdit(before, edit);
      if (!result.ok) {
        get().notify(`Cannot ${describe(edit)}: ${result.message}`, 'error');
        return false;
      }
      const undo = capHistory([...get().editor.undo, diffText(before, result.text)]);
      checkpoint = result.text;
      const selection =
        edit.op === 'addNode' ? { selectedNode: edit.node.id, selectedEdge: null }
        : edit.op === 'removeNode' || edit.op === 'removeEdge' ? { selectedNode: null, selectedEdge: null }
        : {};
      patch({ text: result.text, undo, redo: [], ...selection });
      get().notify(null);
      void get().validateNow();
      return true;
    },

    undoGraphEdit() {
      step(true);
    },

    undo() {
      step(true);
    },

    redo() {
      step(false);
    },

    selectEditorNode(id, moveCaret = true) {
      patch({ selectedNode: id, selectedEdge: null });
      const line = id ? get().editor.graph?.nodes.find((n) => n.id === id)?.line : undefined;
      if (moveCaret && line) get().moveCaret(line, 1);
    },

    selectEditorEdge(id) {
      patch({ selectedEdge: id, selectedNode: null });
      const line = id ? get().editor.graph?.edges.find((e) => e.id === id)?.line : undefined;
      if (line) get().moveCaret(line, 1);
    },

    moveCaret(line, column = 1, focus = false) {
      patch({ caret: { line, column, focus, nonce: ++caretNonce } });
    },

    setRoleModel(role, path) {
      const roleModels = { ...get().roleModels };
      if (path) roleModels[role] = path;
      else delete roleModels[role];
      set({ roleModels });
    },

    setDefaultModel(path) {
      set({ defaultModel: path });
    },
  };
}

function describe(edit: GraphEdit): string {
  switch (edit.op) {
    case 'addNode': return `add node "${edit.node.id}"`;
    case 'removeNode': return `remove node "${edit.id}"`;
    case 'addEdge': return `add edge ${edit.from} -> ${edit.to}`;
    case 'removeEdge': return 'remove the edge';
    case 'setRole': return `set the role of "${edit.id}"`;
  }
  return edit satisfies never;
}
