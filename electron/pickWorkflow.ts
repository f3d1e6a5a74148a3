/**
 * The desktop app's Open dialog for a workflow document, main's side: one invoke channel,
 * `flowlab:pickWorkflowFile` (`PICK_WORKFLOW_CHANNEL`), outside the API allowlist because only
 * the desktop app has it. The page sends nothing (it cannot name a path: the user picks the file
 * in the system dialog); main checks the sender as for every API call, reads the chosen file
 * (at most MAX_WORKFLOW_FILE_BYTES, strict UTF-8, at most MAX_WORKFLOW_CHARS characters) and
 * answers `{name, text}` with the file's base name only, or null when the dialog was cancelled.
 * Failures cross as the ApiError wire form (`<message> [<CODE>]`), as API calls do (ipc.ts).
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ApiError, MAX_WORKFLOW_CHARS, PICK_WORKFLOW_CHANNEL, type PickedWorkflowFile } from '../core/api/index.ts';
import { MAX_WORKFLOW_FILE_BYTES } from '../host/index.ts';
import type { IpcInvokeEventLike, IpcMainLike } from './ipc.ts';
import { errorMessage } from '../core/errors.ts';

/** What the picker needs from Electron (parameters, so tests pass fakes). */
export interface WorkflowPickerDeps {
  /** `dialog.showOpenDialog` for one file, filtered to workflow files. */
  showOpenDialog(): Promise<{ canceled: boolean; filePaths: string[] }>;
  /** Whether the call comes from the app's own page (main passes `isOwnPage`). */
  isTrustedSender(event: IpcInvokeEventLike): boolean;
}

/** The dialog's file filter. */
export const WORKFLOW_FILTERS = [{ name: 'Workflows', extensions: ['yaml', 'yml', 'json'] }];

/**
 * Answers one pick: checks sender and payload, shows the dialog, reads the file.
 * @throws ApiError FORBIDDEN (a foreign frame), BAD_REQUEST (a payload given; a file too large,
 * not UTF-8, or not a .yaml / .yml / .json file), NOT_FOUND (gone before it was read).
 */
export async function pickWorkflowFile(event: IpcInvokeEventLike, payload: unknown, deps: WorkflowPickerDeps): Promise<PickedWorkflowFile | null> {
  const method = 'pickWorkflowFile';
  if (!deps.isTrustedSender(event)) throw new ApiError('FORBIDDEN', `${method}: calls from ${event.senderFrame?.url ?? 'an unknown frame'} are not allowed`, method);
  if (payload !== undefined) throw new ApiError('BAD_REQUEST', `${method}: takes no payload (the file is chosen in the dialog)`, method);
  const chosen = await deps.showOpenDialog();
  const file = chosen.filePaths[0];
  if (chosen.canceled || !file) return null;
  const name = path.basename(file);
  if (!/\.(ya?ml|json)$/i.test(name)) throw new ApiError('BAD_REQUEST', `${name} is not a workflow file (.yaml, .yml or .json)`, method);
  const size = await stat(file).then((s) => s.size, () => {
    throw new ApiError('NOT_FOUND', `${name} is gone (${file})`, method);
  });
  if (size > MAX_WORKFLOW_FILE_BYTES) throw new ApiError('BAD_REQUEST', `${name} is ${size} bytes, over the ${MAX_WORKFLOW_FILE_BYTES}-byte limit of a workflow document`, method);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await readFile(file));
  } catch {
    throw new ApiError('BAD_REQUEST', `${name} is not UTF-8 text`, method);
  }
  if (text.length > MAX_WORKFLOW_CHARS) throw new ApiError('BAD_REQUEST', `${name} has ${text.length} characters, over the ${MAX_WORKFLOW_CHARS} of a workflow document`, method);
  return { name, text };
}

/** Registers the channel on `ipcMain`; returns the function that removes it. */
export function registerWorkflowPicker(ipcMain: IpcMainLike, deps: WorkflowPickerDeps): () => void {
  ipcMain.handle(PICK_WORKFLOW_CHANNEL, async (event, payload) => {
    try {
      return await pickWorkflowFile(event, payload, deps);
    } catch (err) {
      const apiError = err instanceof ApiError ? err : new ApiError('INTERNAL', `pickWorkflowFile: ${errorMessage(err)}`, 'pickWorkflowFile');
      throw new Error(apiError.toWire(), { cause: apiError });
    }
  });
  return () => ipcMain.removeHandler(PICK_WORKFLOW_CHANNEL);
}
