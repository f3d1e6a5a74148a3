import { createContext, useContext } from 'react';
import type { StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import type { LabState } from './state.ts';

/** Carries the lab's view store to the views; `main.tsx` provides it. */
export const LabContext = createContext<StoreApi<LabState> | null>(null);

/** Selects a slice of the lab's view state; re-renders when that slice changes. */
export function useLab<T>(selector: (state: LabState) => T): T {
  const store = useContext(LabContext);
  if (!store) throw new Error('useLab must be used inside <LabContext.Provider>');
  return useStore(store, selector);
}
