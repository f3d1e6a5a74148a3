/** Renderer entry: builds the API client and view store, subscribes to pushed events, mounts the app. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiClient, onConnectionStatus, subscribe } from './api.ts';
import { App } from './App.tsx';
import { workshopRoute } from './views/workshop/WorkshopRoot.tsx';
import { createLabStore } from './state.ts';
import { keepDraft, restoreDraft } from './store/draft.ts';
import { THEME_KEY } from './App.tsx';
import { LabContext } from './useLab.ts';
import './styles.css';

const container = document.getElementById('root');
if (!container) throw new Error('renderer/index.html has no #root element');

const lab = createLabStore(createApiClient(), {
  schedule: (fn) => void requestAnimationFrame(fn),
  delay: (fn, ms) => {
    const t = window.setTimeout(fn, ms);
    return () => window.clearTimeout(t);
  },
  // The theme last chosen (Alt+T) wins over the system's.
  prefersDark: storedTheme() ? storedTheme() === 'dark' : (window.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false),
});

// The editor's draft survives reloads and restarts (localStorage; store/draft.ts).
installDraft();

// The lab's pushed events, on the lab's page only: a workshop page follows its own (the attendee's
// token is refused on /api/events, and these subscriptions opened the stream and retried into 403s).
if (workshopRoute() === null) followLab();

function followLab(): void {
  // Pushed LabEvents (Electron IPC or the browser host's event stream), folded once per frame.
  subscribe((event) => lab.getState().receive(event));
  // Writes by anyone (the CLI included) refetch the lists they touch; a lost connection shows a banner (store/live.ts).
  subscribe((event) => lab.getState().receiveStored(event));
  onConnectionStatus((status) => lab.getState().setConnection(status));
  // MASS jobs started from the MASS tab (renderer/store/mass.ts).
  subscribe((event) => lab.getState().receiveMass(event));
  // Studies started from the Studies view (renderer/store/studies.ts).
  subscribe((event) => lab.getState().receiveStudy(event));
  subscribe((event) => lab.getState().receiveJob(event));
}

function installDraft(): void {
  let storage: Storage;
  try {
    storage = window.localStorage;
  } catch {
    return; // no storage here: the text lasts for this page only
  }
  restoreDraft(lab, storage);
  const draft = keepDraft(lab, storage, (fn, ms) => {
    const t = window.setTimeout(fn, ms);
    return () => window.clearTimeout(t);
  });
  window.addEventListener('pagehide', () => draft.flush());
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') draft.flush();
  });
}

function storedTheme(): string | null {
  try {
    return localStorage.getItem(THEME_KEY);
  } catch {
    return null;
  }
}

createRoot(container).render(
  <StrictMode>
    <LabContext.Provider value={lab}>
      <App />
    </LabContext.Provider>
  </StrictMode>,
);
