import { useEffect } from 'react';
import { useLab } from './useLab.ts';
import { ExperimentsView } from './views/ExperimentsView.tsx';
import { RunsView } from './views/RunsView.tsx';
import { TraceView } from './views/TraceView.tsx';

/** The app's one screen: experiments, then the chosen experiment's runs, then the chosen run's node events. */
export function App() {
  const refresh = useLab((s) => s.refresh);
  const appInfo = useLab((s) => s.appInfo);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  return (
    <>
      <header className="app-head">
        <h1>Flowlab</h1>
        {appInfo.status === 'ready' && (
          <p className="muted" title={appInfo.data.dbFile}>
            v{appInfo.data.version} · {appInfo.data.dbFile}
          </p>
        )}
      </header>
      <main>
        <ExperimentsView />
        <RunsView />
        <TraceView />
      </main>
    </>
  );
}
