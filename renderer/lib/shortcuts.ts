/**
 * Keyboard shortcuts (pure): a key press, plus where focus is, maps to one lab action. The App
 * listens on the window and dispatches; the help overlay lists SHORTCUTS.
 */

export const VIEWS = ['editor', 'run', 'trace', 'ladder', 'experiments', 'models', 'rollouts', 'cards', 'learning'] as const;
export type View = (typeof VIEWS)[number];

export type ShortcutAction =
  | { type: 'view'; view: View }
  | { type: 'toggleTheme' }
  | { type: 'help' }
  | { type: 'escape' }
  | { type: 'openExample' }
  | { type: 'addNode' }
  | { type: 'removeSelected' }
  | { type: 'undoGraphEdit' }
  | { type: 'startRun' }
  | { type: 'cancelRun' }
  | { type: 'refresh' }
  | { type: 'nextNode'; delta: 1 | -1 };

export interface KeyPress {
  key: string;
  /** `KeyboardEvent.code`, layout-independent (`Digit1`, `KeyT`). */
  code: string;
  altKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  /** Focus is in a text field (input, textarea, select, contenteditable). */
  inTextField: boolean;
}

/** Shown by the help overlay (`?`). */
export const SHORTCUTS: ReadonlyArray<{ keys: string; what: string }> = [
  { keys: 'Alt+1 … Alt+9', what: 'Editor, Run, Trace, Ladder, Experiments, Models, Rollouts, Prior library, Learning' },
  { keys: 'Alt+T', what: 'switch light / dark theme' },
  { keys: 'Alt+O', what: 'open an example workflow (Editor)' },
  { keys: 'Alt+N', what: 'add a node (Editor)' },
  { keys: 'Delete', what: 'remove the selected node or edge (Editor, focus outside the text)' },
  { keys: 'Alt+Z', what: 'undo the last graph edit (Editor)' },
  { keys: 'Ctrl+Enter', what: 'start the run (Run)' },
  { keys: 'Alt+C', what: 'cancel the running experiment' },
  { keys: 'J / K', what: 'next / previous node (Trace)' },
  { keys: 'Alt+R', what: 'refresh lists' },
  { keys: 'Esc', what: 'close the panel / clear the selection' },
  { keys: '?', what: 'this help' },
];

/** The action for a key press in `view`, or null. */
export function shortcutFor(k: KeyPress, view: View): ShortcutAction | null {
  const mod = k.ctrlKey || k.metaKey;
  if (k.altKey && !mod) {
    const digit = /^Digit([1-9])$/.exec(k.code);
    if (digit) return { type: 'view', view: VIEWS[Number(digit[1]) - 1]! };
    switch (k.code) {
      case 'KeyT': return { type: 'toggleTheme' };
      case 'KeyR': return { type: 'refresh' };
      case 'KeyC': return { type: 'cancelRun' };
      case 'KeyO': return view === 'editor' ? { type: 'openExample' } : null;
      case 'KeyN': return view === 'editor' ? { type: 'addNode' } : null;
      case 'KeyZ': return view === 'editor' ? { type: 'undoGraphEdit' } : null;
    }
    return null;
  }
  if (mod && !k.altKey && k.key === 'Enter') return view === 'run' ? { type: 'startRun' } : null;
  if (k.key === 'Escape') return { type: 'escape' };
  if (k.inTextField || mod || k.altKey) return null;
  if (k.key === '?') return { type: 'help' };
  if ((k.key === 'Delete' || k.key === 'Backspace') && view === 'editor') return { type: 'removeSelected' };
  if (view === 'trace' && (k.key === 'j' || k.key === 'ArrowDown')) return { type: 'nextNode', delta: 1 };
  if (view === 'trace' && (k.key === 'k' || k.key === 'ArrowUp')) return { type: 'nextNode', delta: -1 };
  return null;
}
