/** Renderer entry: builds the API client and view store, and mounts the app. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiClient } from './api.ts';
import { App } from './App.tsx';
import { createLabStore } from './state.ts';
import { LabContext } from './useLab.ts';
import './styles.css';

const container = document.getElementById('root');
if (!container) throw new Error('renderer/index.html has no #root element');

const lab = createLabStore(createApiClient());
createRoot(container).render(
  <StrictMode>
    <LabContext.Provider value={lab}>
      <App />
    </LabContext.Provider>
  </StrictMode>,
);
