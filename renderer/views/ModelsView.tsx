import { useState } from 'react';
import type { ModelEntry } from '../../core/api/lab.ts';
import { userMessage } from '../lib/messages.ts';
import { TEST_MAX_TOKENS, TEST_PROMPT } from '../store/catalog.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { bytes, paramCount } from './format.ts';
import { DownloadModel } from './DownloadModel.tsx';
import { Playground } from './Playground.tsx';
import { MODEL_CATALOGUE } from './modelCatalogue.ts';
import { LoadState } from './Status.tsx';
import { TableHead } from './TableHead.tsx';

/** GGUF models: the model folder's and those added by path, with metadata, role assignment, a test generation and the playground. */
export function ModelsView() {
  const { models, loadModels, appInfo, defaultModel } = useLabPick('models', 'loadModels', 'appInfo', 'defaultModel');
  const list = models.status === 'ready' ? models.data : [];
  const [request, setRequest] = useState<{ source: string; n: number } | undefined>(undefined);
  const folder = appInfo.status === 'ready' ? appInfo.data.modelDir : undefined;
  return (
    <section className="view models-view" aria-labelledby="models-title">
      <header className="view-head">
        <h2 id="models-title">Models</h2>
        <button type="button" onClick={() => void loadModels()}>
          Rescan
        </button>
      </header>
      <AddModel />
      <DownloadModel request={request} />
      <LoadState state={models} what="models" />
      {models.status === 'ready' && list.length === 0 && (
        <div className="empty" data-testid="models-empty">
          <p>
            <strong>No models yet.</strong> Copy <code>.gguf</code> files into the lab's model folder
            {folder && (
              <>
                {' '}
                (<code data-testid="models-folder">{folder}</code>)
              </>
            )}{' '}
            and press Rescan, add a file by its absolute path above, or download one of these small instruction models (Q4, they run on a laptop's CPU):
          </p>
          <table data-testid="model-catalogue">
            <TableHead columns={['Model', { label: 'Size', num: true }, 'Licence', 'Laptop', 'Notes', '']} />
            <tbody>
              {MODEL_CATALOGUE.map((m) => (
                <tr key={m.source}>
                  <td>
                    {m.name}
                    <br />
                    <code className="small">{m.source}</code>
                  </td>
                  <td className="num">≈ {m.approxMb >= 1000 ? `${(m.approxMb / 1000).toFixed(1)} GB` : `${m.approxMb} MB`}</td>
                  <td>{m.licence}</td>
                  <td>{m.fits}</td>
                  <td className="small">{m.note}; size checked, sha256 shown after download (none pinned)</td>
                  <td>
                    <button type="button" data-testid="catalogue-get" onClick={() => setRequest({ source: m.source, n: Date.now() })}>
                      Download
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.length > 0 && (
        <div className="scroll">
          <table data-testid="models-table">
            <TableHead
              columns={['File', 'Architecture', { label: 'Parameters', num: true }, 'Quantisation', { label: 'Context', num: true }, 'Chat template', { label: 'Size', num: true }, 'Use for', 'Test']}
            />
            <tbody>
              {list.map((m, i) => (
                <ModelRow key={m.path} model={m} index={i} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {models.status === 'ready' && <Playground models={list} defaultModel={defaultModel} />}
    </section>
  );
}

function AddModel() {
  const { addModel, addModelResult: result } = useLabPick('addModel', 'addModelResult');
  const [path, setPath] = useState('');
  return (
    <form
      className="row wrap add-model"
      onSubmit={(e) => {
        e.preventDefault();
        void addModel(path).then((ok) => ok && setPath(''));
      }}
    >
      <label className="row grow">
        <span>Add a GGUF by path</span>
        <input className="grow" data-testid="model-path" placeholder="/home/me/models/qwen2.5-0.5b-instruct-q8_0.gguf" value={path} onChange={(e) => setPath(e.target.value)} />
      </label>
      <button type="submit" data-testid="model-add" disabled={!path.trim() || result.status === 'loading'}>
        {result.status === 'loading' ? 'Reading…' : 'Add'}
      </button>
      {result.status === 'error' && (
        <p className="note error small" role="alert" data-testid="model-add-error">
          <span aria-hidden="true">✗</span> {userMessage(result)}
        </p>
      )}
      {result.status === 'ready' && <p className="note small tone-ok">✓ Added {result.data.fileName}.</p>}
    </form>
  );
}

function ModelRow({ model: m, index }: { model: ModelEntry; index: number }) {
  const roles = useLab((s) => s.editor.graph?.roles);
  const { roleModels, defaultModel, setRoleModel, setDefaultModel } = useLabPick('roleModels', 'defaultModel', 'setRoleModel', 'setDefaultModel');
  const test = useLab((s) => s.modelTests[m.path]);
  const testModel = useLab((s) => s.testModel);
  const usedBy = [...(defaultModel === m.path ? ['default'] : []), ...Object.entries(roleModels).filter(([, p]) => p === m.path).map(([r]) => r)];

  return (
    <tr data-testid={`model-row-${index}`}>
      <td>
        <code title={m.path}>{m.fileName}</code>
        <span className="muted small"> {m.source === 'added' ? 'added by path' : 'model folder'}</span>
        {m.info?.name && <div className="muted small">{m.info.name}</div>}
        {m.error && (
          <div className="note error small" role="alert">
            ✗ {m.error}
          </div>
        )}
        {m.unavailable && (
          <div className="note error small" role="alert" data-testid="model-unavailable">
            unavailable: {m.unavailable}
          </div>
        )}
      </td>
      <td>{m.info?.architecture ?? '–'}</td>
      <td className="num">{paramCount(m.info?.parameters)}</td>
      <td>{m.info?.fileType ?? '–'}</td>
      <td className="num">{m.info?.contextLength?.toLocaleString() ?? '–'}</td>
      <td>{m.info ? (m.info.hasChatTemplate ? '✓ yes' : '✗ no') : '–'}</td>
      <td className="num">{bytes(m.sizeBytes)}</td>
      <td>
        <select
          aria-label={`Use ${m.fileName} for`}
          data-testid={`model-assign-${index}`}
          value=""
          disabled={!!m.error}
          onChange={(e) => {
            const v = e.target.value;
            if (v === '*default') setDefaultModel(m.path);
            else if (v === '*all') (roles ?? []).forEach((r) => setRoleModel(r.name, m.path));
            else if (v) setRoleModel(v, m.path);
          }}
        >
          <option value="">assign…</option>
          <option value="*default">default model</option>
          {roles?.length ? <option value="*all">every role of the open workflow</option> : null}
          {(roles ?? []).map((r) => (
            <option key={r.name} value={r.name}>
              role {r.name}
            </option>
          ))}
        </select>
        {usedBy.length > 0 && <div className="small">used by {usedBy.join(', ')}</div>}
      </td>
      <td>
        <button type="button" data-testid="model-test" disabled={!!m.error || !!m.unavailable || test?.status === 'loading'} onClick={() => void testModel(m.path)} title={`Generate ${TEST_MAX_TOKENS} tokens after “${TEST_PROMPT}”`}>
          {test?.status === 'loading' ? 'Generating…' : 'Test'}
        </button>
        {test?.status === 'ready' && (
          <div className="small" data-testid="model-test-result">
            <q>{TEST_PROMPT}</q>
            <strong>{test.data.text}</strong>
            <div className="muted">
              {test.data.promptTokens} prompt + {test.data.completionTokens} completion tokens · {Math.round(test.data.ms)} ms
            </div>
          </div>
        )}
        {test?.status === 'error' && (
          <div className="note error small" role="alert" data-testid="model-test-result">
            ✗ {userMessage(test)}
          </div>
        )}
      </td>
    </tr>
  );
}
