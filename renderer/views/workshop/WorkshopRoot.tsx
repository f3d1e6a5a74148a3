/**
 * Workshop mode's pages (`flowlab workshop`): `#/workshop/presenter` (the presenter's token:
 * attendee URL and QR code, step, timer, live prediction count, controls, reveal) and
 * `#/workshop` (the attendee's token: follows the presenter's step, predicts; phone-sized).
 * Both refresh on the store's `workshop` events and poll only while the event stream is down
 * (followWorkshop.ts; the attendee token has no stream, so its page polls); the timer counts
 * down on the page against the host's clock.
 */
import { useEffect, useMemo, useState } from 'react';
import QRCode from 'qrcode';
import type { AttendeeView, FlowlabClient, WorkshopView } from '../../../core/api/client.ts';
import { errorMessage } from '../../../core/api/client.ts';
import { connectionStatus, createApiClient, onConnectionStatus, subscribe } from '../../api.ts';
import { followWorkshop, isLoopbackUrl, publicFactValue, revealTraces, verdictOf, workshopStream } from './followWorkshop.ts';
import './workshop.css';

/** Whether the page's hash asks for a workshop page, and which. */
export function workshopRoute(hash: string = typeof location === 'undefined' ? '' : location.hash): 'presenter' | 'attendee' | null {
  if (hash === '#/workshop/presenter') return 'presenter';
  if (hash === '#/workshop' || hash.startsWith('#/workshop?')) return 'attendee';
  return null;
}

/** The view, the last error, and a setter for a view the page got otherwise (a control's answer). */
function useWorkshopView(api: FlowlabClient, role: 'presenter' | 'attendee' = 'presenter'): [WorkshopView | null, string | null, (v: WorkshopView) => void] {
  const [view, setView] = useState<WorkshopView | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(
    () => followWorkshop({
      fetch: () => api.getWorkshop(),
      onView: (v) => (setView(v), setError(null)),
      onError: setError,
      ...workshopStream(role, { subscribe, onConnectionStatus, connectionStatus }),
    }),
    [api, role],
  );
  return [view, error, setView];
}

/** Re-renders every second (the timer), with how far the host's clock is ahead of this page's, ms. */
function useHostClock(view: WorkshopView): number {
  const [, tick] = useState(0);
  useEffect(() => {
    const t = window.setInterval(() => tick((n) => n + 1), 1000);
    return () => window.clearInterval(t);
  }, []);
  // `view.now` was the host's clock when the view was made: keep the offset of its arrival.
  const offset = useMemo(() => view.now - Date.now(), [view]);
  return Date.now() + offset;
}

/**
 * Joins the room once: the host issues this page its attendee identity (a signed cookie, so a
 * reload keeps it); predictions count for that identity, whatever the body says.
 */
function useJoin(api: FlowlabClient): { me: string | null; joinError: string | null } {
  const [me, setMe] = useState<string | null>(null);
  const [joinError, setJoinError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    api.joinWorkshop().then(
      (j) => live && setMe(j.attendee),
      (e: unknown) => live && setJoinError(errorMessage(e)),
    );
    return () => {
      live = false;
    };
  }, [api]);
  return { me, joinError };
}

function Timer({ view }: { view: WorkshopView }) {
  const now = useHostClock(view);
  // As core/workshop/steps.ts `secondsLeft` counts, on the host's clock.
  const left = Math.max(0, Math.ceil(view.step.seconds - (now - view.step.startedAt) / 1000));
  return <span className={`ws-timer${left === 0 ? ' ws-over' : ''}`} data-testid="ws-timer">{Math.floor(left / 60)}:{String(left % 60).padStart(2, '0')}</span>;
}

/**
 * The reveal: truth, the room's score, facts and command; on the presenter's page (`traces`) a link
 * per run the step wrote, opening its trace in the lab in a new tab (the presenter's token opens the
 * whole lab; the attendee's does not).
 */
function Reveal({ view, traces = false }: { view: WorkshopView; traces?: boolean }) {
  const r = view.step.reveal;
  if (!r) return null;
  const links = traces ? revealTraces(r.result) : [];
  const max = Math.max(1, ...Object.values(r.score.byChoice));
  return (
    <section className="ws-reveal" data-testid="ws-reveal">
      <h3>Truth: <span data-testid="ws-truth">{r.truthLabel}</span></h3>
      <p><strong>{r.result.headline}</strong></p>
      <p>{r.text}</p>
      <p data-testid="ws-score">The room: {r.score.correct} of {r.score.total} right{r.score.share === null ? '' : ` (${Math.round(r.score.share * 100)}%)`}.</p>
      <ul className="ws-bars">
        {view.step.choices.map((c) => (
          <li key={c.id} className={c.id === r.result.truth ? 'ws-right' : ''}>
            <span>{c.label}</span>
            <meter min={0} max={max} value={r.score.byChoice[c.id] ?? 0} />
            <b>{r.score.byChoice[c.id] ?? 0}</b>
          </li>
        ))}
      </ul>
      <dl className="ws-facts">{r.result.facts.map((f) => <div key={f.label}><dt>{f.label}</dt><dd>{publicFactValue(f.value)}</dd></div>)}</dl>
      {links.length > 0 && (
        <p className="ws-traces" data-testid="ws-traces">
          Open a run&apos;s trace:{' '}
          {links.map((l, i) => (
            <span key={l.runId}>
              {i > 0 && ' · '}
              <a href={`${location.pathname}${location.search}${l.hash}`} target="_blank" rel="noopener noreferrer" data-testid={`ws-trace-${i}`}>
                {l.runId}
              </a>
            </span>
          ))}
        </p>
      )}
      <pre className="ws-command">{r.result.command}</pre>
    </section>
  );
}

/** The presenter's list of who joined (identities the host issued), each with a Remove button. */
function Attendees({ api, joined, cap, version }: { api: FlowlabClient; joined: number; cap: number; version: number }) {
  const [list, setList] = useState<AttendeeView[]>([]);
  useEffect(() => {
    void api.listAttendees().then(setList, () => {});
  }, [api, joined, version]);
  const remove = (id: string) => void api.removeAttendee({ attendee: id }).then(() => api.listAttendees().then(setList), () => {});
  return (
    <details className="ws-attendees" data-testid="ws-attendees">
      <summary>{joined} of {cap} joined</summary>
      <ul>
        {list.map((a) => (
          <li key={a.id}>
            <code>{a.id}</code> <span className="muted">{a.address}</span>{' '}
            <button type="button" onClick={() => remove(a.id)}>Remove</button>
          </li>
        ))}
      </ul>
    </details>
  );
}

function Presenter({ api }: { api: FlowlabClient }) {
  const [view, error, setView] = useWorkshopView(api);
  const [qr, setQr] = useState<string | null>(null);
  const url = view?.attendeeUrl ?? null;
  useEffect(() => {
    if (url) void QRCode.toDataURL(url, { margin: 1, width: 240 }).then(setQr, () => setQr(null));
  }, [url]);
  if (!view) return <p className="ws-page">{error ?? 'Loading the workshop…'}</p>;
  const act = (payload: Parameters<FlowlabClient['controlWorkshop']>[0]) => void api.controlWorkshop(payload).then(setView, () => {});
  const s = view.step;
  return (
    <div className="ws-page ws-presenter" data-testid="ws-presenter">
      <header className="ws-head">
        <h1>{view.scenario.title}</h1>
        <span className="muted">Step {s.index + 1} of {view.steps.length} · {view.mode === 'room' ? 'from the rehearsal' : 'live'}</span>
        <Timer view={view} />
      </header>
      <div className="ws-grid">
        <main>
          <h2 data-testid="ws-step-title">{s.title}</h2>
          {s.text.split(/\n\s*\n/).map((p, i) => <p key={i}>{p}</p>)}
          <p className="ws-prompt">{s.prompt}</p>
          <p className="ws-count" data-testid="ws-count">{s.predictions} prediction{s.predictions === 1 ? '' : 's'}</p>
          {s.status !== 'ready' && <p className="ws-status" data-testid="ws-status">{s.status === 'running' ? 'Running for real…' : s.status === 'failed' ? `Failed: ${s.problem ?? ''}` : 'Not rehearsed yet (the rehearsal is running).'}</p>}
          <div className="ws-controls">
            <button type="button" onClick={() => act({ action: 'prev' })} disabled={s.index === 0}>◀ Prev</button>
            <button type="button" data-testid="ws-reveal-btn" onClick={() => act({ action: 'reveal' })} disabled={s.revealed || s.status !== 'ready'}>Reveal</button>
            <button type="button" onClick={() => act({ action: 'next' })} disabled={s.index === view.steps.length - 1}>Next ▶</button>
            <button type="button" onClick={() => act({ action: 'restart-timer' })}>Restart timer</button>
            <button type="button" onClick={() => act({ action: 'reset' })}>Reset</button>
          </div>
          <Reveal view={view} traces />
        </main>
        <aside className="ws-join">
          {url && isLoopbackUrl(url) ? (
            // No phone in the room can open a loopback address: no QR code for it, but how to share.
            <p className="ws-warn" role="note" data-testid="ws-loopback-warning">
              This address works on this computer only: phones cannot open it. To let the room join, restart with <code>--host 0.0.0.0</code> (the
              command then prints this machine&apos;s network addresses).
            </p>
          ) : (
            <>
              <p>Join on your phone:</p>
              {qr ? <img src={qr} alt="QR code of the attendee page" data-testid="ws-qr" width={240} height={240} /> : null}
            </>
          )}
          <p className="ws-url" data-testid="ws-url">{url}</p>
          <Attendees api={api} joined={view.attendees.joined} cap={view.attendees.cap} version={view.version} />
        </aside>
      </div>
    </div>
  );
}

function Attendee({ api }: { api: FlowlabClient }) {
  const [view, error] = useWorkshopView(api, 'attendee');
  const { me, joinError } = useJoin(api);
  const [mine, setMine] = useState<Record<string, string>>({});
  if (!view || !me) return <p className="ws-page" data-testid="ws-joining">{joinError ?? error ?? 'Joining the workshop…'}</p>;
  const s = view.step;
  const pick = (choice: string) => void api.submitPrediction({ attendee: me, stepId: s.id, choice }).then(() => setMine((m) => ({ ...m, [s.id]: choice })), () => {});
  return (
    <div className="ws-page ws-attendee" data-testid="ws-attendee">
      <header className="ws-head">
        <h1>{view.scenario.title}</h1>
        <Timer view={view} />
      </header>
      <h2 data-testid="ws-step-title">{s.index + 1}. {s.title}</h2>
      {s.text.split(/\n\s*\n/).map((p, i) => <p key={i}>{p}</p>)}
      <p className="ws-prompt">{s.prompt}</p>
      <div className="ws-choices">
        {s.choices.map((c) => (
          <button key={c.id} type="button" data-testid={`ws-choice-${c.id}`} aria-pressed={mine[s.id] === c.id} disabled={s.revealed} onClick={() => pick(c.id)}>{c.label}</button>
        ))}
      </div>
      {mine[s.id] && !s.revealed && <p className="muted" data-testid="ws-sent">Your prediction is in. Wait for the reveal.</p>}
      {s.revealed && s.reveal && (() => {
        const v = verdictOf(mine[s.id], s.reveal.result.truth);
        return <p data-testid="ws-verdict" data-tone={v.tone} className={v.tone === 'right' ? 'ws-right' : v.tone === 'wrong' ? 'ws-wrong' : ''}>{v.text}</p>;
      })()}
      <Reveal view={view} />
    </div>
  );
}

/** The workshop page for `role`. */
export function WorkshopRoot({ role }: { role: 'presenter' | 'attendee' }) {
  const api = useMemo(() => createApiClient(), []);
  return role === 'presenter' ? <Presenter api={api} /> : <Attendee api={api} />;
}
