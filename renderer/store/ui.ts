/** Which view is open, the theme, the help overlay and the one-line notice. */
import type { View } from '../lib/shortcuts.ts';
import type { Theme } from '../lib/graphStyle.ts';
import type { SliceContext } from './types.ts';

export interface UiSlice {
  view: View;
  theme: Theme;
  helpOpen: boolean;
  /** A short message for the status line (e.g. why a graph edit was refused). */
  notice: { text: string; tone: 'info' | 'error' } | null;
  setView(view: View): void;
  setTheme(theme: Theme): void;
  toggleTheme(): void;
  setHelp(open: boolean): void;
  notify(text: string | null, tone?: 'info' | 'error'): void;
}

/** Adds this slice to the lab state (store/types.ts). */
declare module './types.ts' {
  interface LabState extends UiSlice {}
}

export function createUiSlice({ set, get, deps }: SliceContext): UiSlice {
  return {
    view: 'editor',
    theme: deps.prefersDark ? 'dark' : 'light',
    helpOpen: false,
    notice: null,
    setView: (view) => set({ view }),
    setTheme: (theme) => set({ theme }),
    toggleTheme: () => set({ theme: get().theme === 'dark' ? 'light' : 'dark' }),
    setHelp: (helpOpen) => set({ helpOpen }),
    notify: (text, tone = 'info') => set({ notice: text === null ? null : { text, tone } }),
  };
}
