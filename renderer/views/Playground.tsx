import { useEffect, useMemo, useState } from 'react';
import { ApiError, errorMessage, isPlaygroundEvent, MAX_PLAYGROUND_TOKENS, type ModelEntry } from '../../core/api/client.ts';
import { createApiClient, subscribe } from '../api.ts';
import { userMessage } from '../lib/messages.ts';
import { preferredModel } from '../lib/modelChoice.ts';
import { foldGeneration, formPayload, initialForm, type GenerationView, type PlaygroundForm } from '../lib/playground.ts';

/** The endpoint choice of the model menu (the reference is typed beside it). */
const ENDPOINT = '*endpoint';

/**
 * The Models view's playground: a model (a listed GGUF file or an OpenAI-compatible endpoint),
 * system text, prompt and the sampling settings a role has (temperature, top-k, top-p, min-p,
 * seed, max tokens, JSON schema); Generate streams the reply through `startGeneration`'s events,
 * with the prompt as the model sees it (its chat template applied), the tokens so far and their
 * speed; Stop cancels it.
 */
export function Playground({ models, defaultModel }: { models: readonly ModelEntry[]; defaultModel?: string | null | undefined }) {
  const api = useMemo(() => createApiClient(), []);
  const usable = useMemo(() => models.filter((m) => !m.error && !m.unavailable), [models]);
  const start = defaultModel && usable.some((m) => m.path === defaultModel) ? defaultModel : preferredModel(usable);
  const [form, setForm] = useState<PlaygroundForm>(() => initialForm(start));
  const [choice, setChoice] = useState<string>(start);
  const [generationId, setGenerationId] = useState<string | null>(null);
  const [views, setViews] = useState<Record<string, GenerationView>>({});
  const [error, setError] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);

  // Events may arrive before startGeneration answers: keep every generation's, show ours.
  useEffect(
    () => subscribe((e) => {
      if (isPlaygroundEvent(e)) setViews((v) => ({ ...v, [e.generationId]: foldGeneration(v[e.generationId], e) }));
    }),
    [],
  );
  // A model list that arrives after the first render: preselect from it.
  useEffect(() => {
    if (!form.model && start) {
      setForm((f) => ({ ...f, model: start }));
      setChoice(start);
    }
  }, [start, form.model]);

  const view = generationId ? views[generationId] : undefined;
  const running = starting || view?.status === 'running';
  const set = (key: keyof PlaygroundForm) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [key]: e.target.value }));

  const generate = async () => {
    setError(null);
    const parsed = formPayload(form);
    if ('problem' in parsed) return setError(parsed.problem);
    setStarting(true);
    try {
      const { generationId: id } = await api.startGeneration(parsed.payload);
      setGenerationId(id);
    } catch (err) {
      setError(userMessage(err instanceof ApiError ? err : { message: errorMessage(err) }));
    } finally {
      setStarting(false);
    }
  };
  const stop = async () => {
    if (!generationId) return;
    try {
      await api.cancelGeneration({ generationId });
    } catch (err) {
      setError(userMessage(err instanceof ApiError ? err : { message: errorMessage(err) }));
    }
  };

  const number = (key: keyof PlaygroundForm, label: string, step: string, title: string) => (
    <label className="stack">
      <span>{label}</span>
      <input type="number" step={step} data-testid={`playground-${key}`} value={form[key]} onChange={set(key)} title={title} style={{ width: '7em' }} />
    </label>
  );

  return (
    <section className="playground stack" aria-labelledby="playground-title" data-testid="playground" style={{ marginTop: '1rem' }}>
      <h3 id="playground-title">Playground</h3>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void generate();
        }}
      >
        <div className="row wrap">
          <label className="row">
            <span>Model</span>
            <select
              data-testid="playground-model"
              value={choice}
              onChange={(e) => {
                const v = e.target.value;
                setChoice(v);
                setForm((f) => ({ ...f, model: v === ENDPOINT ? '' : v }));
              }}
            >
              {usable.length === 0 && <option value="">no usable model file</option>}
              {usable.map((m) => (
                <option key={m.path} value={m.path}>
                  {m.fileName}
                  {m.info && !m.info.hasChatTemplate ? ' (no chat template)' : ''}
                </option>
              ))}
              <option value={ENDPOINT}>an OpenAI-compatible endpoint…</option>
            </select>
          </label>
          {choice === ENDPOINT && (
            <input className="grow" data-testid="playground-endpoint" placeholder="openai:http://127.0.0.1:8080/v1#qwen2.5-0.5b-instruct" value={form.model} onChange={set('model')} />
          )}
        </div>
        <label className="stack">
          <span>System</span>
          <textarea data-testid="playground-system" rows={2} style={{ width: '100%' }} value={form.system} onChange={set('system')} placeholder="You are a careful assistant." />
        </label>
        <label className="stack">
          <span>Prompt</span>
          <textarea data-testid="playground-prompt" rows={4} style={{ width: '100%' }} value={form.prompt} onChange={set('prompt')} placeholder="Once upon a time" />
        </label>
        <div className="row wrap">
          {number('temperature', 'Temperature', '0.05', '0..5; 0 is greedy')}
          {number('topK', 'Top-k', '1', '0..1000; 0 turns it off')}
          {number('topP', 'Top-p', '0.01', '0..1; 1 turns it off')}
          {number('minP', 'Min-p', '0.01', '0..1; 0 turns it off')}
          {number('seed', 'Seed', '1', 'the same seed and settings give the same text with a local model')}
          {number('maxTokens', 'Max tokens', '1', `1..${MAX_PLAYGROUND_TOKENS}`)}
        </div>
        <details>
          <summary>JSON schema (constrains the reply)</summary>
          <textarea data-testid="playground-schema" rows={4} value={form.jsonSchema} onChange={set('jsonSchema')} placeholder='{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}' style={{ width: '100%' }} />
        </details>
        <div className="row">
          <button type="submit" data-testid="playground-generate" disabled={running}>
            {running ? 'Generating…' : 'Generate'}
          </button>
          <button type="button" data-testid="playground-stop" disabled={!running || !generationId} onClick={() => void stop()}>
            Stop
          </button>
        </div>
      </form>
      {error && (
        <p className="note error small" role="alert" data-testid="playground-error">
          <span aria-hidden="true">✗</span> {error}
        </p>
      )}
      {view && <GenerationResult view={view} />}
    </section>
  );
}

/** The prompt the model saw, the streamed reply, and the counts and speed. */
function GenerationResult({ view }: { view: GenerationView }) {
  const live = view.status === 'running';
  return (
    <div className="stack" data-testid="playground-result" data-status={view.status}>
      <details open>
        <summary>
          Prompt as the model sees it
          {view.promptForm === 'template' && ' (its chat template applied)'}
          {view.promptForm === 'plain' && ' (no chat template: plain completion)'}
          {view.promptTokens !== undefined && ` · ${view.promptTokens} tokens`}
        </summary>
        {view.promptForm === 'server' ? (
          <p className="muted small" data-testid="playground-rendered">The endpoint applies its own chat template; the system text and prompt were sent as chat messages.</p>
        ) : (
          <pre className="small" data-testid="playground-rendered" style={{ whiteSpace: 'pre-wrap' }}>
            {view.renderedPrompt ?? '…'}
            {view.renderedCut && '\n[cut: the prompt is longer]'}
          </pre>
        )}
      </details>
      {view.thinking && (
        <details>
          <summary>Thinking</summary>
          <pre className="small" style={{ whiteSpace: 'pre-wrap' }}>{view.thinking}</pre>
        </details>
      )}
      <pre data-testid="playground-output" aria-live="polite" style={{ whiteSpace: 'pre-wrap', border: '1px solid var(--line)', padding: '0.5rem', minHeight: '4em' }}>
        {view.text}
        {live && <span aria-hidden="true">▍</span>}
      </pre>
      <p className="small" data-testid="playground-stats">
        <span data-testid="playground-tokens">{view.completionTokens ?? (live ? `${view.pieces} pieces` : '–')}</span> completion tokens
        {view.tokensPerSecond !== undefined && (
          <>
            {' · '}
            <span data-testid="playground-speed">{view.tokensPerSecond.toFixed(1)}</span> tokens/s
          </>
        )}
        {view.firstTokenMs !== undefined && ` · first token ${Math.round(view.firstTokenMs)} ms`}
        {view.ms !== undefined && ` · ${Math.round(view.ms)} ms`}
        {view.promptTokens !== undefined && ` · ${view.promptTokens} prompt tokens`}
        {!live && view.stopReason && ` · stopped: ${view.stopReason === 'maxTokens' ? 'max tokens' : view.stopReason === 'eos' ? 'end of text' : view.stopReason}`}
        {live ? ' · streaming…' : ''}
      </p>
      {(view.status === 'failed' || view.status === 'cancelled') && (
        <p className={`note small ${view.status === 'failed' ? 'error' : ''}`} role={view.status === 'failed' ? 'alert' : undefined} data-testid="playground-end">
          {view.status === 'failed' ? `✗ ${view.message ?? 'failed'}` : 'Stopped.'}
        </p>
      )}
    </div>
  );
}
