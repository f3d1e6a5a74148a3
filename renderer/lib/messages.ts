/**
 * Error messages in the user's words (pure). The API's messages are written for logs and tests:
 * they start with the method called (`startRun: …`), name payload fields (`payload field "path":
 * must be …`) and travel with a code (`[BAD_REQUEST]`). The views show what went wrong and what
 * to do, never the method or a code alone; the code stays in the Loadable for tests and logs.
 */

/** Payload fields as a person would name them. */
const FIELD_WORDS: Readonly<Record<string, string>> = {
  path: 'The model file path',
  workflowText: 'The workflow text',
  text: 'The workflow text',
  dataset: 'The dataset',
  split: 'The split',
  limit: 'The number of tasks',
  offset: 'The first task',
  seed: 'The seed',
  models: 'The model choice',
  experimentId: 'The experiment',
  runId: 'The run',
  id: 'The id',
  prompt: 'The prompt',
  maxTokens: 'The number of tokens',
  source: 'The source',
  sha256: 'The sha256',
  fileName: 'The file name',
};

/** What to say when a code arrives with no usable message. */
const CODE_WORDS: Readonly<Record<string, string>> = {
  BAD_REQUEST: 'The lab refused this request: something entered is not valid.',
  NOT_FOUND: 'It is no longer there (deleted, or from another database).',
  UNAVAILABLE: 'The lab server cannot be reached. Is `flowlab serve` (or the desktop app) still running?',
  FORBIDDEN: 'This page may not use the lab: open it through the link `flowlab serve` prints.',
  BUSY: 'What this needs is in use by a running experiment: wait for it or cancel it.',
  RATE_LIMITED: 'Too many requests in a short time: wait a few seconds and try again.',
  INTERNAL: 'Something went wrong inside the lab.',
};

/**
 * `message` without the API method prefix and the wire code suffix, with payload fields named in
 * words. Shapes: `{message, code?}` as a failed Loadable holds them; returns one sentence-cased line.
 *
 * `startRun: Model file not found: /m.gguf [BAD_REQUEST]` -> `Model file not found: /m.gguf`;
 * `addModel: payload field "path": must be an absolute path` -> `The model file path must be an absolute path`.
 */
export function userMessage(error: { message?: string; code?: string }): string {
  let text = (error.message ?? '').trim();
  // The wire form's code suffix: `… [BAD_REQUEST]`, `… [BAD_REQUEST path]`.
  text = text.replace(/\s*\[[A-Z_]+(?: [^\s\]]+)?\]$/, '');
  // A leading API method name (camelCase identifier followed by a colon), possibly repeated.
  while (/^[a-z][A-Za-z]*: /.test(text)) text = text.replace(/^[a-z][A-Za-z]*: /, '');
  // Payload fields: `payload field "a.b": must …` -> `The … must …`.
  text = text.replace(/payload field "([^"]+)":\s*/g, (_m, field: string) => `${fieldWords(field)} `);
  text = text.replace(/^(invalid workflow): /, 'The workflow is not valid: ');
  if (!text) return CODE_WORDS[error.code ?? ''] ?? CODE_WORDS.INTERNAL!;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function fieldWords(field: string): string {
  const head = field.split('.')[0]!;
  return FIELD_WORDS[field] ?? FIELD_WORDS[head] ?? `The value “${field}”`;
}

/** `1 node`, `2 nodes`, `0 nodes`: a count with its noun in the right number (`plural` for irregular nouns). */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`;
}
