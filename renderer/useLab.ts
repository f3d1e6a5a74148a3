import { createContext, useContext } from 'react';
import type { StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import type { LabState } from './state.ts';

/** Carries the lab's view store to the views; `main.tsx` provides it. */
export const LabContext = createContext<StoreApi<LabState> | null>(null);

/** The store itself, for actions read at call time (keyboard handlers) and imperative reads. */
export function useLabStore(): StoreApi<LabState> {
  const store = useContext(LabContext);
  if (!store) throw new Error('useLab must be used inside <LabContext.Provider>');
  return store;
}

/**
 * Selects a slice of the lab's view state; re-renders when that slice changes (by Object.is).
 * Selectors must return stored references or primitives, never fresh objects.
 */
export function useLab<T>(selector: (state: LabState) => T): T {
  return useStore(useLabStore(), selector);
}

/**
 * Selects several top-level fields of the lab's view state at once:
 * `const { experiments, theme } = useLabPick('experiments', 'theme')`. Re-renders when any picked
 * field changes (by Object.is, as one `useLab` per field would), via zustand's `useShallow`.
 */
export function useLabPick<K extends keyof LabState>(...keys: K[]): Pick<LabState, K> {
  return useStore(
    useLabStore(),
    useShallow((s: LabState) => {
      const picked = {} as Pick<LabState, K>;
      for (const k of keys) picked[k] = s[k];
      return picked;
    }),
  );
}
