/**
 * The worker thread of host/workflowValidator.ts: answers `{id, text, file}` messages with
 * `{id, result}` (core/api `validateWorkflowText`, the default tools) or `{id, error}` (a bug's
 * message), after one `{ready: true}` once loaded. Runs nothing else; the lab host's event loop never parses a large document itself.
 */
import { parentPort } from 'node:worker_threads';
import { validateWorkflowText } from '../core/api/index.ts';
import { defaultTools } from '../core/tools/index.ts';

const tools = defaultTools();
parentPort?.postMessage({ ready: true });
parentPort?.on('message', (m: { id: number; text: string; file?: string }) => {
  try {
    parentPort!.postMessage({ id: m.id, result: validateWorkflowText(m.text, m.file, tools) });
  } catch (e) {
    parentPort!.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) });
  }
});
