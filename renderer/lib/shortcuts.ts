/**
 * Keyboard shortcuts (pure): a key press, plus where focus is, maps to one lab action. The App
 * listens on the window and dispatches; the help overlay lists SHORTCUTS.
 */

export const VIEWS = ['editor', 'run', 'trace', 'ladder', 'experiments', 'models', 'rollouts', 'cards', 'learning'] as const;
/** Every view, as the tabs show them: VIEWS (Alt+1 … Alt+9), then Studies (Alt+0) and those reached with Alt+[ / Alt+]. */
export const ALL_VIEWS = [...VIEWS, 'studies', 'mass', 'runs'] as const;
export type View = (typeof ALL_VIEWS)[number];

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

/** Each view's title (its tab, and the help overlay's Alt+digit line), in VIEWS order. */
export const VIEW_TITLES: Readonly<Record<View, string>> = {
  editor: 'Editor',
  run: 'Run',
  trace: 'Trace',
  ladder: 'Ladder',
  experiments: 'Experiments',
  models: 'Models',
  rollouts: 'Rollouts',
  cards: 'Prior library',
  learning: 'Learning',
  studies: 'Studies',
  mass: 'MASS',
  runs: 'Runs',
};

/** The shortcut of the view at `index` in ALL_VIEWS, as its tab's title says it: Alt+1 … Alt+9, Alt+0, else Alt+[ / Alt+]. */
export function viewKeyOf(index: number): string {
  return index < 9 ? `Alt+${index + 1}` : index === 9 ? 'Alt+0' : 'Alt+[ / Alt+]';
}

/** An Alt+letter shortcut: its key (`KeyboardEvent.code`), action, the one view it works in (absent: any) and help line. */
interface AltKey {
  code: `Key${string}`;
  action: ShortcutAction;
  view?: View;
  what: string;
}

/** The Alt+letter shortcuts; shortcutFor reads them, the help overlay lists them. */
const ALT_KEYS: readonly AltKey[] = [
  { code: 'KeyT', action: { type: 'toggleTheme' }, what: 'switch light / dark theme' },
  { code: 'KeyO', view: 'editor', action: { type: 'openExample' }, what: 'open an example workflow' },
  { code: 'KeyN', view: 'editor', action: { type: 'addNode' }, what: 'add a node' },
  { code: 'KeyZ', view: 'editor', action: { type: 'undoGraphEdit' }, what: 'undo the last graph edit' },
  { code: 'KeyC', action: { type: 'cancelRun' }, what: 'cancel the running experiment' },
  { code: 'KeyR', action: { type: 'refresh' }, what: 'refresh lists' },
];

/** Shown by the help overlay (`?`): the Alt+digit views, the Alt+letter keys (with the view they need), then the plain keys. */
export const SHORTCUTS: ReadonlyArray<{ keys: string; what: string }> = [
  { keys: `Alt+1 … Alt+${VIEWS.length}`, what: VIEWS.map((v) => VIEW_TITLES[v]).join(', ') },
  { keys: 'Alt+0', what: VIEW_TITLES[ALL_VIEWS[9]] },
  { keys: 'Alt+[ / Alt+]', what: `previous / next view (every view: ${ALL_VIEWS.slice(10).map((v) => VIEW_TITLES[v]).join(', ')} too)` },
  ...ALT_KEYS.map((a) => ({ keys: `Alt+${a.code.slice(3)}`, what: a.view ? `${a.what} (${VIEW_TITLES[a.view]})` : a.what })),
  { keys: 'Ctrl+Enter', what: 'start the run (Run)' },
  { keys: 'Delete', what: 'remove the selected node or edge (Editor, focus outside the text)' },
  { keys: 'J / K', what: 'next / previous node (Trace)' },
  { keys: 'Esc', what: 'close the panel / clear the selection' },
  { keys: '?', what: 'this help' },
];

/** The action for a key press in `view`, or null. */
export function shortcutFor(k: KeyPress, view: View): ShortcutAction | null {
  const mod = k.ctrlKey || k.metaKey;
  if (k.altKey && !mod) {
    const digit = /^Digit([0-9])$/.exec(k.code);
    if (digit) return { type: 'view', view: digit[1] === '0' ? ALL_VIEWS[9] : VIEWS[Number(digit[1]) - 1]! };
    if (k.code === 'BracketLeft' || k.code === 'BracketRight') {
      const i = ALL_VIEWS.indexOf(view);
      const n = ALL_VIEWS.length;
      return { type: 'view', view: ALL_VIEWS[(i + (k.code === 'BracketRight' ? 1 : n - 1)) % n]! };
    }
    const alt = ALT_KEYS.find((a) => a.code === k.code);
    return alt && (alt.view === undefined || alt.view === view) ? { ...alt.action } : null;
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
