/**
 * The worker thread of host/workflowValidator.ts: answers `{id, text, file}` messages with
 * `{id, json}` (core/api `validateWorkflowText` with the default tools, as JSON text) or `{id, error}` (a bug's
 * message), after one `{ready: true}` once loaded. Runs nothing else; the lab host's event loop never parses a large document itself.
 */
import { parentPort } from 'node:worker_threads';
import { validateWorkflowText } from '../core/api/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { errorMessage } from '../core/errors.ts';

const tools = defaultTools();
parentPort?.postMessage({ ready: true });
parentPort?.on('message', (m: { id: number; text: string; file?: string }) => {
  try {
    // As JSON text: the host sends it on as is, so the main thread never walks a large outline.
    parentPort!.postMessage({ id: m.id, json: JSON.stringify(validateWorkflowText(m.text, m.file, tools)) });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: errorMessage(e) });
  }
});
