/**
 * A blame evaluation's report in the Experiments view (issue 29, "every evaluation the CLI prints,
 * in the window"): the tables and lines `flowlab blame-eval` prints (cli/formatExperiments.ts
 * `formatBlame`) from the same report (`getBlameEval`): precision and recall per role and per
 * fault kind, cascades not blamed, faults structure cannot see, the model's own failures. Each
 * figure cell carries its raw value in `data-value` (the e2e compares them with the CLI's JSON).
 */
import { useEffect, useRef } from 'react';
import type { BlameEvalView } from '../../core/api/client.ts';
import { flowlabCommand } from '../lib/commands.ts';
import { useLab, useLabPick } from '../useLab.ts';
import { LoadState } from './Status.tsx';
import { modelsLabel } from '../lib/vocabulary.ts';
import { TableHead } from './TableHead.tsx';

/** A rate as the CLI prints it: two decimals, `-` when there is none (nothing injected or blamed). */
export const rate = (x: number | null) => (x === null ? '-' : x.toFixed(2));

export function BlameEvalPanel() {
  const { blameEval, blameEvalId, openBlameEval } = useLabPick('blameEval', 'blameEvalId', 'openBlameEval');
  const dbFile = useLab((s) => (s.appInfo.status === 'ready' ? s.appInfo.data.dbFile : null));
  const models = useLab((s) => (s.experiments.status === 'ready' ? s.experiments.data.find((e) => e.id === blameEvalId)?.models : undefined));
  const box = useRef<HTMLElement>(null);
  // Opened from a row below: bring the panel into view.
  // (A block, not an arrow's value: Chromium's scrollIntoView returns a Promise, which React would call as the effect's cleanup.)
  useEffect(() => {
    box.current?.scrollIntoView({ block: 'nearest' });
  }, [blameEvalId]);
  if (!blameEvalId) return null;
  const ready = blameEval.status === 'ready' && blameEval.data.experimentId === blameEvalId ? blameEval.data : null;
  return (
    <section ref={box} className="blame-eval-panel" data-testid="blame-eval-panel" aria-labelledby="blame-eval-title">
      <header className="row wrap">
        <h3 id="blame-eval-title">
          Blame evaluation <code>{blameEvalId}</code> <span className="tag sim">SIMULATED faults</span>
        </h3>
        <span className="muted small" data-testid="blame-eval-models">models {modelsLabel(models)}</span>
        <button type="button" className="link" data-testid="blame-eval-close" onClick={() => void openBlameEval(null)}>
          close
        </button>
      </header>
      <LoadState state={blameEval} what="the blame evaluation" />
      {ready && <BlameEvalReport view={ready} />}
      <p className="muted small">
        Scored again from the stored runs: what <code>flowlab blame-eval --json</code> printed when it ended, and what{' '}
        <code data-testid="blame-eval-command">{flowlabCommand(['show', blameEvalId], dbFile)}</code> prints.
      </p>
    </section>
  );
}

const cell = (testId: string, value: number | null, text = rate(value)) => (
  <td className="num" data-testid={testId} data-value={value === null ? 'null' : String(value)}>
    {text}
  </td>
);

function BlameEvalReport({ view: b }: { view: BlameEvalView }) {
  const kinds = Object.entries(b.byKind).filter(([, v]) => v.injected > 0);
  const natural = Object.entries(b.natural.byRole).map(([r, n]) => `${r} ${n}`).join(', ') || 'none';
  return (
    <div data-testid="blame-eval-report" data-runs={b.runs}>
      <p className="small">
        Injected: <code>{b.inject.join(', ')}</code> · {b.runs} runs
      </p>
      <div className="row wrap">
        <table data-testid="blame-eval-roles">
          <caption>Per role</caption>
          <TableHead columns={['Role', { label: 'Precision', num: true }, { label: 'Recall', num: true }, { label: 'Injected', num: true }, { label: 'Blamed', num: true }]} />
          <tbody>
            {Object.entries(b.byRole).map(([role, v]) => (
              <tr key={role} data-testid={`blame-eval-role-${role}`}>
                <td>{role}</td>
                {cell(`blame-eval-role-${role}-precision`, v.precision)}
                {cell(`blame-eval-role-${role}-recall`, v.recall)}
                {cell(`blame-eval-role-${role}-injected`, v.injected, String(v.injected))}
                {cell(`blame-eval-role-${role}-blamed`, v.blamed, String(v.blamed))}
              </tr>
            ))}
          </tbody>
        </table>
        <table data-testid="blame-eval-kinds">
          <caption>Per fault kind (kinds injected)</caption>
          <TableHead columns={['Fault kind', { label: 'Precision', num: true }, { label: 'Recall', num: true }, { label: 'Injected', num: true }, { label: 'Surfaced', num: true }, { label: 'Unseen by structure', num: true }]} />
          <tbody>
            {kinds.map(([kind, v]) => (
              <tr key={kind} data-testid={`blame-eval-kind-${kind}`}>
                <td>{kind}</td>
                {cell(`blame-eval-kind-${kind}-precision`, v.precision)}
                {cell(`blame-eval-kind-${kind}-recall`, v.recall)}
                {cell(`blame-eval-kind-${kind}-injected`, v.injected, String(v.injected))}
                {cell(`blame-eval-kind-${kind}-surfaced`, v.surfaced, String(v.surfaced))}
                <td className="num">
                  {v.injected - v.surfaced} ({(((v.injected - v.surfaced) / v.injected) * 100).toFixed(0)}%)
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ul className="small">
        <li data-testid="blame-eval-cascades" data-value={`${b.cascadesNotBlamed}/${b.cascadesTotal}`}>
          Cascades below injected faults not blamed: {b.cascadesNotBlamed} / {b.cascadesTotal}
        </li>
        {b.designCascades && (
          <li data-testid="blame-eval-design-cascades" data-value={`${b.designCascades.notBlamed}/${b.designCascades.total}`}>
            Cascades behind a SIMULATED bad wire (design faults) not blamed: {b.designCascades.notBlamed} / {b.designCascades.total}
          </li>
        )}
        <li data-testid="blame-eval-unseen" data-value={`${b.unseen}/${b.unseenShare}`}>
          Faults structure cannot see (no node failed: wrong answers, dropped optional fields): {b.unseen} ({(b.unseenShare * 100).toFixed(0)}% of injected) — only the correctness rung carries them.
        </li>
        <li data-testid="blame-eval-natural" data-value={`${b.natural.roots}/${b.natural.ambiguous}/${b.natural.infrastructure}`}>
          Natural failures (the model&apos;s own, not counted in precision): {b.natural.roots} root(s) [{natural}], {b.natural.ambiguous} ambiguous, {b.natural.infrastructure} infrastructure.
        </li>
      </ul>
    </div>
  );
}
