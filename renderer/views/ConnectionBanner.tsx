import { useEffect, useState } from 'react';
import { useLab } from '../useLab.ts';
import './connection.css';

/**
 * The banner of a lost connection to the server (store/live.ts): since when, when the next try
 * is, and what does not work meanwhile. Gone once the connection is back.
 */
export function ConnectionBanner() {
  const connection = useLab((s) => s.connection);
  const [, tick] = useState(0);
  const down = connection.state !== 'open';
  useEffect(() => {
    if (!down) return;
    const t = window.setInterval(() => tick((n) => n + 1), 1000);
    return () => window.clearInterval(t);
  }, [down]);
  if (!down) return null;
  const seconds = connection.downSince ? Math.max(0, Math.round((Date.now() - connection.downSince) / 1000)) : 0;
  return (
    <div className="banner warn connection-banner" role="alert" data-testid="connection-banner" data-state={connection.state}>
      <strong>Lost the connection to the Flowlab server</strong> ({seconds} s ago).{' '}
      {connection.state === 'connecting' ? 'Trying again now…' : `Trying again in ${Math.round((connection.retryInMs ?? 0) / 1000)} s (try ${connection.attempt}).`}{' '}
      Starting, cancelling and saving are off until it is back; your edits stay in this page. If you restarted <code>flowlab serve</code>, open the
      address it printed.
    </div>
  );
}
