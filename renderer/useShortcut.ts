/**
 * View-level shortcut handlers. The App maps key presses to actions (lib/shortcuts.ts) and
 * handles the global ones; view-specific actions (focus a field, open the chosen example) are
 * re-dispatched as a `flowlab:shortcut` DOM event that the open view listens for.
 */
import { useEffect, useRef } from 'react';
import type { ShortcutAction } from './lib/shortcuts.ts';

const EVENT = 'flowlab:shortcut';

/** Sends an action to the views. */
export function dispatchShortcut(action: ShortcutAction): void {
  window.dispatchEvent(new CustomEvent<ShortcutAction>(EVENT, { detail: action }));
}

/** Calls `handler` for actions of `type` while the component is mounted. */
export function useShortcut<T extends ShortcutAction['type']>(type: T, handler: (action: Extract<ShortcutAction, { type: T }>) => void): void {
  const ref = useRef(handler);
  ref.current = handler;
  useEffect(() => {
    const listener = (e: Event) => {
      const action = (e as CustomEvent<ShortcutAction>).detail;
      if (action.type === type) ref.current(action as Extract<ShortcutAction, { type: T }>);
    };
    window.addEventListener(EVENT, listener);
    return () => window.removeEventListener(EVENT, listener);
  }, [type]);
}
