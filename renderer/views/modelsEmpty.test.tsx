import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { createLabStore, type LabState } from '../state.ts';
import { closeImproveStores, emptyClient } from '../store/improve.fixture.ts';
import { LabContext } from '../useLab.ts';
import { MODEL_CATALOGUE } from './modelCatalogue.ts';
import { ModelsView } from './ModelsView.tsx';

afterEach(closeImproveStores);

describe("the Models view's empty state", () => {
  it('shows the models folder and the catalogue of small instruction models, each with a download button', () => {
    const lab = createLabStore(emptyClient());
    lab.setState({
      models: { status: 'ready', data: [] },
      appInfo: { status: 'ready', data: { version: '0.1.0', dbFile: '/u/flowlab.db', modelDir: '/home/u/.config/Flowlab/models' } },
    } as Partial<LabState>);
    const store: StoreApi<LabState> = { ...lab, getInitialState: lab.getState };
    const html = renderToStaticMarkup(<LabContext.Provider value={store}><ModelsView /></LabContext.Provider>);
    expect(html).toContain('data-testid="models-empty"');
    expect(html).toContain('<code data-testid="models-folder">/home/u/.config/Flowlab/models</code>');
    expect(html.match(/data-testid="catalogue-get"/g)).toHaveLength(MODEL_CATALOGUE.length);
    for (const m of MODEL_CATALOGUE) {
      expect(html).toContain(m.source);
      expect(m.source).toMatch(/^hf:[^/]+\/[^/]+\/[^/]+\.gguf$/);
    }
    // No sha256 is claimed for the catalogue: none could be checked where it was written.
    expect(html).toContain('none pinned');
  });
});
