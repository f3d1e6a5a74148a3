import { userMessage } from '../lib/messages.ts';
import type { StatusLabel } from './format.ts';

/** A status as symbol + word (readable without colour), tinted by its tone. */
export function Status({ label }: { label: StatusLabel }) {
  return (
    <span className={`status tone-${label.tone}`}>
      <span aria-hidden="true">{label.symbol}</span> {label.text}
    </span>
  );
}

/** The body of a section while its data is loading or failed; null once ready. */
export function LoadState({ state, what }: { state: { status: string; message?: string; code?: string }; what: string }) {
  if (state.status === 'loading') return <p className="note" role="status">Loading {what}…</p>;
  if (state.status === 'error') {
    return (
      <p className="note error" role="alert">
        <span aria-hidden="true">✗</span> Could not load {what}: {userMessage(state)}
      </p>
    );
  }
  return null;
}

/** The Refresh button of a view's header: runs `onRefresh` (its promise is not awaited). */
export function RefreshButton({ onRefresh, title = 'Refresh (Alt+R)' }: { onRefresh: () => unknown; title?: string }) {
  return (
    <button type="button" onClick={() => void onRefresh()} title={title}>
      Refresh
    </button>
  );
}
