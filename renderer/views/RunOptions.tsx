import { useEffect } from 'react';
import type { LibraryCard, WeightVersionView } from '../../core/api/client.ts';
import { useLab, useLabPick } from '../useLab.ts';

/** A card's trust mark as one short text (empty when none): SIMULATED and/or failed sources. */
export function trustMark(card: LibraryCard): string {
  const marks: string[] = [];
  if (card.simulated) marks.push('SIMULATED');
  if (card.trust && card.trust.failedSources > 0) marks.push(card.trust.failedSources === card.trust.found ? 'from failed runs' : `${card.trust.failedSources} failed source runs`);
  return marks.join(', ');
}

/** A weight version as an option: its loop (from its folder), iteration and file. */
export function versionLabel(v: WeightVersionView): string {
  const parts = v.path.split(/[\\/]/);
  const loop = parts.length >= 3 ? parts[parts.length - 3] : undefined;
  const where = v.iteration !== undefined ? `iteration ${v.iteration}` : 'offline step';
  return `${loop && loop.startsWith('tl-') ? `${loop} · ` : ''}${where} · ${parts.at(-1)} (${v.id})`;
}

/**
 * The Run form's kind (a run, or rollouts: G samples per task with advantages) and its options,
 * as `flowlab run` / `flowlab rollouts` take them.
 */
export function RunKind() {
  const { runOptions: o, setRunOptions } = useLabPick('runOptions', 'setRunOptions');
  return (
    <fieldset className="run-kind" data-testid="run-kind">
      <legend>Kind</legend>
      <label className="row">
        <span>Experiment</span>
        <select data-testid="run-kind-select" value={o.kind} onChange={(e) => setRunOptions({ kind: e.target.value as 'run' | 'rollouts' })}>
          <option value="run">run</option>
          <option value="rollouts">rollouts (G per task)</option>
        </select>
      </label>
      <p className="muted small">
        {o.kind === 'run' ? 'Each task once, as flowlab run.' : 'G samples per task with distinct seeds, each learning role’s group-relative advantage stored, as flowlab rollouts.'}
      </p>
      {o.kind === 'rollouts' && (
        <>
          <label className="row">
            <span>Rollouts per task (G)</span>
            <input data-testid="run-group" type="number" min={1} max={64} step={1} value={Number.isFinite(o.group) ? o.group : ''} onChange={(e) => setRunOptions({ group: e.target.valueAsNumber })} />
          </label>
          <label className="row">
            <span>Temperature</span>
            <input data-testid="run-temperature" type="number" min={0.05} max={5} step={0.05} value={Number.isFinite(o.temperature) ? o.temperature : ''} onChange={(e) => setRunOptions({ temperature: e.target.valueAsNumber })} />
          </label>
        </>
      )}
    </fieldset>
  );
}

/**
 * Per role of the open workflow: the hint cards injected into its prompts (`--cards`), each with
 * its trust mark, and a trained weight version replacing its model (`--role-version`).
 */
export function RoleExtras() {
  const roles = useLab((s) => s.editor.graph?.roles);
  const { cards, weightVersions, runOptions, setRoleCards, setRoleVersion, loadCards, loadLearning } = useLabPick(
    'cards', 'weightVersions', 'runOptions', 'setRoleCards', 'setRoleVersion', 'loadCards', 'loadLearning',
  );
  useEffect(() => {
    void loadCards();
    void loadLearning();
  }, [loadCards, loadLearning]);
  const allCards = cards.status === 'ready' ? cards.data : [];
  const versions = weightVersions.status === 'ready' ? weightVersions.data : [];
  if (!roles?.length) return null;
  return (
    <fieldset className="role-extras" data-testid="role-extras">
      <legend>Hint cards and weight versions per role</legend>
      {roles.map((r) => {
        const mine = allCards.filter((c) => c.role === r.name);
        const chosen = runOptions.cards[r.name] ?? [];
        const mineVersions = versions.filter((v) => v.role === r.name);
        const flagged = mine.filter((c) => chosen.includes(c.id) && c.trust?.flagged);
        return (
          <div key={r.name} className="role-extra" data-testid={`role-extra-${r.name}`}>
            <strong>{r.name}</strong>
            {mine.length === 0 ? (
              <p className="muted small">No hint cards for this role.</p>
            ) : (
              <ul className="plain small">
                {mine.map((c) => {
                  const mark = trustMark(c);
                  return (
                    <li key={c.id}>
                      <label title={c.trust?.reasons.join('; ') || c.appliesWhen}>
                        <input
                          type="checkbox"
                          data-testid={`run-card-${c.id}`}
                          checked={chosen.includes(c.id)}
                          onChange={(e) => setRoleCards(r.name, e.target.checked ? [...chosen, c.id] : chosen.filter((x) => x !== c.id))}
                        />{' '}
                        {c.title} <code className="muted">{c.id}</code>
                        {mark && (
                          <span className="tag sim" data-testid={`run-card-flag-${c.id}`}>
                            ⚠ {mark}
                          </span>
                        )}
                      </label>
                    </li>
                  );
                })}
              </ul>
            )}
            {flagged.length > 0 && (
              <p className="note warn small" role="note" data-testid={`run-card-warning-${r.name}`}>
                ⚠ {flagged.map((c) => `${c.id}: ${c.trust!.reasons.join('; ')}`).join(' · ')}
              </p>
            )}
            <label className="row">
              <span>Weight version</span>
              <select aria-label={`Weight version for role ${r.name}`} data-testid={`run-version-${r.name}`} value={runOptions.versions[r.name] ?? ''} onChange={(e) => setRoleVersion(r.name, e.target.value || null)}>
                <option value="">{mineVersions.length ? 'none: the role’s model file' : 'no trained versions'}</option>
                {mineVersions.map((v) => (
                  <option key={v.id} value={v.id}>
                    {versionLabel(v)}
                  </option>
                ))}
              </select>
            </label>
          </div>
        );
      })}
    </fieldset>
  );
}
