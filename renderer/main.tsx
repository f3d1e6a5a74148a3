/** Renderer entry: builds the API client and view store, subscribes to pushed events, mounts the app. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiClient, onConnection, subscribe } from './api.ts';
import { App } from './App.tsx';
import { createLabStore } from './state.ts';
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

// Pushed LabEvents (Electron IPC or the browser host's event stream), folded once per frame.
subscribe((event) => lab.getState().receive(event));
// The event stream going down (the server stopped) and coming back.
onConnection((up) => lab.getState().setConnectionLost(!up));

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
