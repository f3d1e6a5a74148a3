import { useState } from 'react';
import type { LibraryCard } from '../../core/api/client.ts';
import { flowlabCommand } from '../lib/commands.ts';
import { groupExperiments, memberLabel } from '../lib/experimentGroups.ts';
import { graphOf } from '../lib/graphEdits.ts';
import { useLab, useLabPick, useLabStore } from '../useLab.ts';

/** Saves `text` as a download named `name` (a blob URL, revoked once clicked). */
export function downloadText(name: string, text: string, type = 'application/json'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Exports cards (all when `ids` is absent) as `flowlab cards export` writes them, as a download. */
export function ExportCardsButton({ ids, label = 'Export cards' }: { ids?: string[] | undefined; label?: string }) {
  const exportCardsDocument = useLab((s) => s.exportCardsDocument);
  return (
    <button
      type="button"
      data-testid={ids?.length === 1 ? `card-export-${ids[0]}` : 'cards-export'}
      title="Download a versioned JSON document (flowlab cards import reads it)"
      onClick={async () => {
        const doc = await exportCardsDocument(ids);
        if (doc) downloadText(ids?.length === 1 ? `card-${ids[0]}.json` : 'flowlab-cards.json', `${JSON.stringify(doc, null, 2)}\n`);
      }}
    >
      {label}
    </button>
  );
}

/** A card's Export and Delete buttons (Delete asks first: the card's use records go with it). */
export function CardActions({ card }: { card: LibraryCard }) {
  const deleteCard = useLab((s) => s.deleteCard);
  const [confirming, setConfirming] = useState(false);
  return (
    <span className="row card-actions">
      <ExportCardsButton ids={[card.id]} label="Export" />
      {confirming ? (
        <>
          <button type="button" className="danger" data-testid={`card-delete-confirm-${card.id}`} onClick={() => void deleteCard(card.id).then(() => setConfirming(false))}>
            Delete {card.uses ? `(and its ${card.uses} use record${card.uses === 1 ? '' : 's'})` : ''}
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </>
      ) : (
        <button type="button" data-testid={`card-delete-${card.id}`} onClick={() => setConfirming(true)}>
          Delete
        </button>
      )}
    </span>
  );
}

/** Why a card is flagged (SIMULATED, failed source runs), where the library offers it. */
export function TrustNote({ card }: { card: LibraryCard }) {
  if (!card.trust?.reasons.length) return null;
  return (
    <p className={card.trust.flagged ? 'banner warn small' : 'note small'} role="note" data-testid={`card-trust-${card.id}`}>
      <span aria-hidden="true">⚠ </span>
      {card.trust.reasons.join('; ')}.
    </p>
  );
}

/**
 * Distils a card for a role of a stored experiment on the host (`distillCard`, the same options
 * as `flowlab distill`), and shows the exact command that does the same with the served database.
 */
export function DistillForm() {
  const { experiments, distillCardNow, distilling, distillNote } = useLabPick('experiments', 'distillCardNow', 'distilling', 'distillNote');
  const store = useLabStore();
  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  const [experimentId, setExperimentId] = useState('');
  const [roles, setRoles] = useState<string[]>([]);
  const [role, setRole] = useState('');
  const [shots, setShots] = useState(5);
  const [onlySuccesses, setOnlySuccesses] = useState(false);
  const list = experiments.status === 'ready' ? experiments.data.filter((e) => e.runsDone > 0) : [];
  const pick = async (id: string) => {
    setExperimentId(id);
    setRoles([]);
    setRole('');
    if (!id) return;
    const detail = await store.getState().loadExperimentDetail(id);
    const names = detail ? (graphOf(detail)?.roles.map((r) => r.name) ?? []) : [];
    setRoles(names);
    setRole(names[0] ?? '');
  };
  const args = ['distill', '--experiment', experimentId || '<experiment-id>', '--role', role || '<role>', '--shots', String(shots), ...(onlySuccesses ? ['--only-successes'] : [])];
  return (
    <details className="distill-form" data-testid="distill-form">
      <summary>Distil a card from an experiment</summary>
      <div className="row wrap">
        <select data-testid="distill-experiment" value={experimentId} onChange={(e) => void pick(e.target.value)}>
          <option value="">— experiment —</option>
          {groupExperiments(list).map((en) =>
            en.type === 'single' ? (
              <option key={en.key} value={en.experiment.id}>
                {en.experiment.id} · {en.experiment.workflowName}
              </option>
            ) : (
              <optgroup key={en.key} label={en.group.label}>
                {en.members.map((e) => (
                  <option key={e.id} value={e.id}>
                    {memberLabel(e)} · {e.id}
                  </option>
                ))}
              </optgroup>
            ),
          )}
        </select>
        <select data-testid="distill-role" value={role} onChange={(e) => setRole(e.target.value)} disabled={!roles.length}>
          {!roles.length && <option value="">— role —</option>}
          {roles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <label>
          shots <input type="number" min={1} max={20} step={1} value={shots} onChange={(e) => setShots(Math.max(1, Math.min(20, Math.round(e.target.valueAsNumber || 1))))} />
        </label>
        <label>
          <input type="checkbox" checked={onlySuccesses} onChange={(e) => setOnlySuccesses(e.target.checked)} /> successful runs only
        </label>
      </div>
      <div className="row">
        <button
          type="button"
          className="primary"
          data-testid="distill-start"
          disabled={!experimentId || !role || distilling}
          onClick={() => void distillCardNow({ experimentId, role, shots, ...(onlySuccesses && { onlySuccesses: true }) })}
          title="The teacher is the role’s own model in that experiment"
        >
          {distilling ? 'Distilling…' : 'Distil now'}
        </button>
      </div>
      {distillNote && (
        <p className={distillNote.tone === 'error' ? 'note warn' : 'note'} role="status" data-testid="distill-note">
          {distillNote.text}
        </p>
      )}
      <p className="small">
        The same from a terminal (the teacher is the role’s own model; add <code>--teacher &lt;file.gguf&gt;</code> for another):
      </p>
      <pre>
        <code data-testid="distill-command">{flowlabCommand(args, dbFile)}</code>
      </pre>
      {!onlySuccesses && <p className="muted small">Without “successful runs only” a card may be distilled from failed runs: it is then flagged wherever it is offered.</p>}
    </details>
  );
}
