import { useEffect, useMemo } from 'react';
import type { LibraryCard } from '../../core/api/client.ts';
import { cardRoles, effectText, provenance, usesText } from '../lib/cards.ts';
import { userMessage } from '../lib/messages.ts';
import { SIGN_WORD } from '../lib/rollouts.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { LoadState, RefreshButton } from './Status.tsx';
import { shellWord } from '../lib/commands.ts';
import { CardActions, DistillForm, ExportCardsButton, TrustNote } from './CardTools.tsx';

/** Commands the empty state suggests. */
export const DISTILL_COMMAND = 'npm run flowlab -- distill --experiment <experiment-id> --role <role> --shots 3';
export const CARDS_RUN_COMMAND = 'npm run flowlab -- run examples/gsm8k-team.yaml --dataset gsm8k --limit 20 --model <file.gguf> --cards all';

/**
 * The prior library: every hint card with its title, role, when it applies, the advice, its
 * provenance (teacher, shots, source runs, experiment, created), how many runs used it, a
 * SIMULATED marker, and its measured effect (runs with the card vs the same tasks without it).
 */
export function CardsView() {
  const { cards, cardRole: role, setCardRole: setRole, loadCards } = useLabPick('cards', 'cardRole', 'setCardRole', 'loadCards');
  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  const withDb = (command: string) => (dbFile ? `${command} --db ${shellWord(dbFile)}` : command);

  useEffect(() => {
    void loadCards();
  }, [loadCards]);

  const all = cards.status === 'ready' ? cards.data : [];
  const roles = useMemo(() => cardRoles(all), [all]);
  const shown = role ? all.filter((c) => c.role === role) : all;

  return (
    <section className="view cards-view" aria-labelledby="cards-title">
      <header className="view-head">
        <h2 id="cards-title">Prior library</h2>
        <p className="muted small">Hint cards distilled from solved trajectories, injected into a role’s prompt at run time (no weight change).</p>
        {roles.length > 1 && (
          <label className="row role-filter">
            <span className="muted small">Role</span>
            <select data-testid="cards-role" value={role} onChange={(e) => setRole(e.target.value)}>
              <option value="">every role</option>
              {roles.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </label>
        )}
        {all.length > 0 && <ExportCardsButton ids={role ? shown.map((c) => c.id) : undefined} />}
        <RefreshButton onRefresh={loadCards} title="Reload the library" />
      </header>
      <DistillForm />
      <LoadState state={cards} what="the prior library" />
      {cards.status === 'ready' && all.length === 0 && (
        <div className="empty" data-testid="cards-empty">
          <p>
            <strong>The prior library is empty.</strong> Distil a card for a role from an experiment’s best trajectories:
          </p>
          <pre>
            <code>{withDb(DISTILL_COMMAND)}</code>
          </pre>
          <p>Then run with the cards injected and compare against the same tasks without them:</p>
          <pre>
            <code>
              {withDb(CARDS_RUN_COMMAND)}
              {'\n'}
              {withDb('npm run flowlab -- compare <without-cards> <with-cards>')}
            </code>
          </pre>
          <p className="muted small">The Compare panel of Experiments does from the window what flowlab compare &lt;without-cards&gt; &lt;with-cards&gt; prints.</p>
        </div>
      )}
      {shown.length > 0 && (
        <ul className="card-list">
          {shown.map((c) => (
            <li key={c.id}>
              <CardItem card={c} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function CardItem({ card }: { card: LibraryCard }) {
  const effect = useLab((s) => s.cardEffects[card.id]);
  const openRunTrace = useLab((s) => s.openRunTrace);
  const text = effectText(effect?.status === 'ready' ? effect.data : undefined, card.role);
  const titleId = `card-title-${card.id}`;
  return (
    <article className={card.simulated ? 'lib-card simulated' : 'lib-card'} data-testid={`card-${card.id}`} aria-labelledby={titleId}>
      <header className="row wrap">
        <h3 id={titleId}>{card.title}</h3>
        <span className="chip" title="the role whose prompt carries this card">
          role {card.role}
        </span>
        {card.simulated && (
          <span className="tag sim" title="distilled from simulated trajectories or by a simulated teacher">
            SIMULATED
          </span>
        )}
        <span className="muted small">{usesText(card.uses)}</span>
        <CardActions card={card} />
      </header>
      <TrustNote card={card} />
      <dl className="facts card-body">
        <dt>Applies when</dt>
        <dd>{card.appliesWhen}</dd>
        <dt>Advice</dt>
        <dd className="advice">{card.advice}</dd>
      </dl>
      <details className="provenance" open>
        <summary>
          Provenance <span className="muted small">· {card.teacher} · {card.shots} shot{card.shots === 1 ? '' : 's'} · <code>{card.id}</code></span>
        </summary>
        <dl className="facts">
          {provenance(card).map((p) => (
            <Fact key={p.label} label={p.label} value={p.value} />
          ))}
        </dl>
        {card.experimentId && card.sourceRuns.length > 0 && (
          <p className="small">
            Open a source run:{' '}
            {card.sourceRuns.slice(0, 5).map((r) => (
              <button key={r} type="button" className="link" onClick={() => void openRunTrace(card.experimentId!, r)}>
                {r}
              </button>
            ))}
          </p>
        )}
      </details>
      <div className={`card-effect ${text.measured ? 'measured' : 'unmeasured'}`} data-testid={`card-effect-${card.id}`}>
        <strong>Measured effect: </strong>
        {effect?.status === 'loading' ? (
          <span className="muted">measuring…</span>
        ) : effect?.status === 'error' ? (
          <span className="note error" role="alert">
            could not measure: {userMessage(effect)}
          </span>
        ) : (
          <>
            <span className={text.measured ? `effect-${text.sign}` : 'muted'} title={text.measured ? `score change: ${SIGN_WORD[text.sign]}` : undefined}>
              {text.headline}
            </span>
            {text.details.length > 0 && (
              <ul className="small effect-details">
                {text.details.map((d) => (
                  <li key={d}>{d}</li>
                ))}
              </ul>
            )}
          </>
        )}
      </div>
    </article>
  );
}

function Fact({ label, value }: { label: string; value: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </>
  );
}
