/** A value being fetched, and the one helper that fetches it (never rejects). */
import { ApiError } from '../../core/api/client.ts';

/** Not asked for, on its way, there, or failed with a printable error. */
export type Loadable<T> =
  | { status: 'idle' }
  | { status: 'loading' }
  | { status: 'ready'; data: T }
  | { status: 'error'; code: string; message: string };

export const IDLE = { status: 'idle' } as const;
export const LOADING = { status: 'loading' } as const;

/** Runs one API call and turns its outcome into a Loadable. */
export async function load<T>(call: () => Promise<T>): Promise<Loadable<T>> {
  try {
    return { status: 'ready', data: await call() };
  } catch (err) {
    const e = ApiError.fromWire(err);
    return { status: 'error', code: e.code, message: e.message };
  }
}

/** The data of a ready Loadable, else undefined. */
export function dataOf<T>(l: Loadable<T>): T | undefined {
  return l.status === 'ready' ? l.data : undefined;
}

/**
 * Latest-wins fetching of one Loadable field. Each call shows LOADING (unless the field is
 * already ready, so a refresh does not blank the view), runs `call`, and stores its outcome —
 * unless a newer call started meanwhile, in which case it resolves null and stores nothing.
 */
export function latestLoader<T>(read: () => Loadable<T>, write: (value: Loadable<T>) => void): (call: () => Promise<T>) => Promise<Loadable<T> | null> {
  let ticket = 0;
  return async (call) => {
    const mine = ++ticket;
    if (read().status !== 'ready') write(LOADING);
    const value = await load(call);
    if (mine !== ticket) return null;
    write(value);
    return value;
  };
}
