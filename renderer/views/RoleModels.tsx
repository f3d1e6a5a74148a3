import type { ModelEntry } from '../../core/api/lab.ts';
import { useLab, useLabPick } from '../useLab.ts';

/** A select of the known GGUF models (unreadable ones disabled). */
export function ModelSelect(props: { value: string | null; onChange(path: string | null): void; noneLabel: string; testId: string; label: string }) {
  const models = useLab((s) => s.models);
  const list: ModelEntry[] = models.status === 'ready' ? models.data : [];
  const known = !props.value || list.some((m) => m.path === props.value);
  return (
    <select aria-label={props.label} data-testid={props.testId} value={props.value ?? ''} onChange={(e) => props.onChange(e.target.value || null)}>
      <option value="">{props.noneLabel}</option>
      {!known && props.value && <option value={props.value}>{props.value} (not listed)</option>}
      {list.map((m) => (
        <option key={m.path} value={m.path} disabled={!!m.error} title={m.path}>
          {m.fileName}
          {m.info ? ` · ${m.info.architecture} ${m.info.fileType}` : ''}
          {m.error ? ' (unreadable)' : ''}
        </option>
      ))}
    </select>
  );
}

/** The default model and one override per role of the open workflow (shared by Editor and Run). */
export function RoleModels() {
  const roles = useLab((s) => s.editor.graph?.roles);
  const { roleModels, defaultModel, setRoleModel, setDefaultModel, setView, models } = useLabPick(
    'roleModels', 'defaultModel', 'setRoleModel', 'setDefaultModel', 'setView', 'models',
  );
  const none = models.status === 'ready' && models.data.length === 0;

  return (
    <fieldset className="role-models" data-testid="role-models">
      <legend>Models per role</legend>
      {none && (
        <p className="empty small">
          No GGUF models yet. Add one by path in{' '}
          <button type="button" className="link" onClick={() => setView('models')}>
            Models (Alt+6)
          </button>
          .
        </p>
      )}
      <label className="row">
        <span>Default</span>
        <ModelSelect label="Default model" testId="default-model" value={defaultModel} onChange={setDefaultModel} noneLabel="— choose a model —" />
      </label>
      {(roles ?? []).map((r) => (
        <label className="row" key={r.name}>
          <span>
            {r.name} <span className="muted">{r.kind}</span>
          </span>
          <ModelSelect label={`Model for role ${r.name}`} testId={`role-model-${r.name}`} value={roleModels[r.name] ?? null} onChange={(p) => setRoleModel(r.name, p)} noneLabel="default model" />
        </label>
      ))}
      {!roles?.length && <p className="muted small">Open a workflow to assign models to its roles.</p>}
    </fieldset>
  );
}
