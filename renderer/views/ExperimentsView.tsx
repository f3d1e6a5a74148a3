import { useLab } from '../useLab.ts';
import { experimentStatusLabel, percent } from './format.ts';
import { LoadState, Status } from './Status.tsx';

const RUN_HINT = 'npm run flowlab -- run examples/gsm8k-team.yaml --dataset gsm8k --limit 10 --model <file.gguf>';

/** The experiments list: one row per experiment; choosing one shows its runs. */
export function ExperimentsView() {
  const experiments = useLab((s) => s.experiments);
  const selected = useLab((s) => s.selectedExperimentId);
  const selectExperiment = useLab((s) => s.selectExperiment);
  const refresh = useLab((s) => s.refresh);

  return (
    <section aria-labelledby="experiments-title">
      <header className="section-head">
        <h2 id="experiments-title">Experiments</h2>
        <button type="button" onClick={() => void refresh()}>
          Refresh
        </button>
      </header>
      <LoadState state={experiments} what="experiments" />
      {experiments.status === 'ready' && experiments.data.length === 0 && (
        <div className="empty">
          <p>No experiments yet. Run a workflow from a terminal in the Flowlab folder:</p>
          <pre>
            <code>{RUN_HINT}</code>
          </pre>
          <p>then press Refresh.</p>
        </div>
      )}
      {experiments.status === 'ready' && experiments.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Experiment</th>
              <th scope="col">Workflow</th>
              <th scope="col">Dataset</th>
              <th scope="col" className="num">Runs / planned</th>
              <th scope="col" className="num">Accuracy</th>
              <th scope="col" className="num">Completion</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {experiments.data.map((e) => (
              <tr key={e.id} className={e.id === selected ? 'selected' : undefined}>
                <td>
                  <button type="button" className="link" aria-pressed={e.id === selected} onClick={() => void selectExperiment(e.id === selected ? null : e.id)}>
                    {e.id}
                  </button>
                </td>
                <td>{e.workflowName}</td>
                <td>
                  {e.dataset} <span className="muted">{e.split}</span>
                </td>
                <td className="num">
                  {e.runsDone} / {e.tasksPlanned}
                </td>
                <td className="num">{percent(e.accuracy)}</td>
                <td className="num">{percent(e.completionRate)}</td>
                <td>
                  <Status label={experimentStatusLabel(e.status)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
