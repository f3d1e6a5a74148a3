import { useEffect } from 'react';
import { isFinished, runTally } from './lib/liveRun.ts';
import { ALL_VIEWS, shortcutFor, SHORTCUTS, VIEW_TITLES, viewKeyOf } from './lib/shortcuts.ts';
import { traceRoute } from './lib/traceRoute.ts';
import { useLabPick, useLabStore } from './useLab.ts';
import { dispatchShortcut } from './useShortcut.ts';
import { CardsView } from './views/CardsView.tsx';
import { EditorView } from './views/EditorView.tsx';
import { ExperimentsView } from './views/ExperimentsView.tsx';
import { LadderView } from './views/LadderView.tsx';
import { LearningView } from './views/LearningView.tsx';
import { MassView } from './views/MassView.tsx';
import { ModelsView } from './views/ModelsView.tsx';
import { RolloutsView } from './views/RolloutsView.tsx';
import { RunView } from './views/RunView.tsx';
import { RunsView } from './views/RunsView.tsx';
import { StudiesView } from './views/StudiesView.tsx';
import { TraceView } from './views/TraceView.tsx';
import { preloadGraph } from './views/lazy.tsx';
import { ConnectionBanner } from './views/ConnectionBanner.tsx';
import { JobsMenu } from './views/JobsMenu.tsx';
import { workshopRoute, WorkshopRoot } from './views/workshop/WorkshopRoot.tsx';

/** The folder of a file path (POSIX or Windows separators), where the lab keeps what it writes beside the database. */
export function folderOf(file: string): string {
  const i = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  return i > 0 ? file.slice(0, i) : file;
}

/** localStorage key of the chosen theme. */
export const THEME_KEY = 'flowlab.theme';

/** The lab, or a workshop page when the URL's hash asks for one (`#/workshop`, `#/workshop/presenter`). */
export function App() {
  const workshop = workshopRoute();
  return workshop ? <WorkshopRoot role={workshop} /> : <Lab />;
}

/** The lab: a tab per view, global shortcuts, light and dark themes. */
function Lab() {
  const store = useLabStore();
  const { view, theme, appInfo, notice, helpOpen, live, setView, toggleTheme, setHelp, notify } = useLabPick(
    'view', 'theme', 'appInfo', 'notice', 'helpOpen', 'live', 'setView', 'toggleTheme', 'setHelp', 'notify',
  );

  useEffect(() => {
    const s = store.getState();
    void s.refresh();
    void s.loadCatalog();
    void s.attachActiveRun();
    void s.loadJobs();
    // A link to one run's trace (`#/trace/<experiment>/<run>`, the workshop's reveal): open it.
    const route = traceRoute(location.hash);
    if (route) void s.openRunTrace(route.experimentId, route.runId);
    // The graph library is needed by most views: load it right after the first paint.
    const t = window.setTimeout(preloadGraph, 50);
    return () => window.clearTimeout(t);
  }, [store]);

  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    try {
      localStorage.setItem(THEME_KEY, theme);
    } catch {
      // Storage may be unavailable (private mode): the theme then lasts for this session.
    }
  }, [theme]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const el = e.target as HTMLElement | null;
      const inTextField = !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
      const s = store.getState();
      const action = shortcutFor({ key: e.key, code: e.code, altKey: e.altKey, ctrlKey: e.ctrlKey, metaKey: e.metaKey, shiftKey: e.shiftKey, inTextField }, s.view);
      if (!action) return;
      e.preventDefault();
      switch (action.type) {
        case 'view': s.setView(action.view); break;
        case 'toggleTheme': s.toggleTheme(); break;
        case 'help': s.setHelp(!s.helpOpen); break;
        case 'refresh': void s.refresh(); void s.loadCatalog(true); break;
        case 'cancelRun': void s.cancelRun(); break;
        case 'escape':
          if (s.helpOpen) s.setHelp(false);
          else if (s.view === 'trace' && s.traceNode) s.selectTraceNode(null);
          else if (s.view === 'editor' && !inTextField) s.selectEditorNode(null);
          else if (inTextField) el?.blur();
          break;
        default: dispatchShortcut(action);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [store]);

  const running = live && !isFinished(live);
  return (
    <div className="app">
      <header className="app-head">
        <h1>Flowlab</h1>
        <nav className="tabs" aria-label="Views">
          {ALL_VIEWS.map((v, i) => (
            <button key={v} type="button" data-testid={`nav-${v}`} aria-current={v === view ? 'page' : undefined} onClick={() => setView(v)} title={`${VIEW_TITLES[v]} (${viewKeyOf(i)})`}>
              {VIEW_TITLES[v]}
              {v === 'run' && running && (
                <span className="live-dot" aria-label="running">
                  {' '}● {runTally(live).done}/{runTally(live).total}
                </span>
              )}
            </button>
          ))}
        </nav>
        <div className="head-tail">
          <JobsMenu />
          {appInfo.status === 'ready' && (
            <span className="muted small" title={`Database: ${appInfo.data.dbFile}`} data-testid="data-folder">
              v{appInfo.data.version} · data: {folderOf(appInfo.data.dbFile)}
            </span>
          )}
          <button type="button" data-testid="theme-toggle" onClick={toggleTheme} title="Switch theme (Alt+T)" aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}>
            {theme === 'dark' ? '☀ Light' : '☾ Dark'}
          </button>
          <button type="button" data-testid="help-toggle" onClick={() => setHelp(!helpOpen)} aria-expanded={helpOpen} title="Keyboard shortcuts (?)">
            ?
          </button>
        </div>
      </header>
      <ConnectionBanner />
      {notice && (
        <p className={`notice ${notice.tone === 'error' ? 'error' : ''}`} role={notice.tone === 'error' ? 'alert' : 'status'} data-testid="notice">
          {notice.text}
          <button type="button" className="link" aria-label="Dismiss" onClick={() => notify(null)}>
            ✕
          </button>
        </p>
      )}
      <main>
        {view === 'editor' && <EditorView />}
        {view === 'run' && <RunView />}
        {view === 'trace' && <TraceView />}
        {view === 'ladder' && <LadderView />}
        {view === 'experiments' && <ExperimentsView />}
        {view === 'models' && <ModelsView />}
        {view === 'rollouts' && <RolloutsView />}
        {view === 'cards' && <CardsView />}
        {view === 'learning' && <LearningView />}
        {view === 'studies' && <StudiesView />}
        {view === 'mass' && <MassView />}
        {view === 'runs' && <RunsView />}
      </main>
      {helpOpen && (
        <div className="help" role="dialog" aria-label="Keyboard shortcuts" data-testid="help">
          <h2>Keyboard shortcuts</h2>
          <table>
            <tbody>
              {SHORTCUTS.map((s) => (
                <tr key={s.keys}>
                  <th scope="row">
                    <kbd>{s.keys}</kbd>
                  </th>
                  <td>{s.what}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <button type="button" onClick={() => setHelp(false)}>
            Close (Esc)
          </button>
        </div>
      )}
    </div>
  );
}
