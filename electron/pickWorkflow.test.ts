import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, PICK_WORKFLOW_CHANNEL } from '../core/api/index.ts';
import { rejectionOf, scratchDir } from '../test/fixtures.ts';
import { createWorkflowPicker } from './desktopApi.ts';
import type { IpcInvokeEventLike } from './ipc.ts';
import { pickWorkflowFile, registerWorkflowPicker, type WorkflowPickerDeps } from './pickWorkflow.ts';

const scratch = scratchDir('pick-workflow');
const OWN: IpcInvokeEventLike = { senderFrame: { url: 'app://flowlab/index.html' } };

function deps(filePaths: string[], canceled = false): WorkflowPickerDeps {
  return { showOpenDialog: async () => ({ canceled, filePaths }), isTrustedSender: (e) => e.senderFrame?.url === 'app://flowlab/index.html' };
}

const apiError = (p: Promise<unknown>): Promise<ApiError> => rejectionOf(ApiError, p);

describe("the desktop app's Open dialog for workflows (electron/pickWorkflow.ts)", () => {
  it('answers the picked file by base name and text, null when cancelled', async () => {
    const file = path.join(scratch(), 'team.yaml');
    writeFileSync(file, 'name: team\n');
    await expect(pickWorkflowFile(OWN, undefined, deps([file]))).resolves.toEqual({ name: 'team.yaml', text: 'name: team\n' });
    await expect(pickWorkflowFile(OWN, undefined, deps([], true))).resolves.toBeNull();
  });

  it('refuses a foreign frame, a payload (the page cannot name a path), and files that are not workflow text', async () => {
    const bin = path.join(scratch(), 'latin1.yaml');
    writeFileSync(bin, Buffer.from([0x61, 0xe9]));
    const txt = path.join(scratch(), 'notes.txt');
    writeFileSync(txt, 'x');
    await expect(apiError(pickWorkflowFile({ senderFrame: { url: 'https://evil.example/' } }, undefined, deps([bin])))).resolves.toMatchObject({ code: 'FORBIDDEN' });
    await expect(apiError(pickWorkflowFile(OWN, { path: '/etc/passwd' }, deps([bin])))).resolves.toMatchObject({ code: 'BAD_REQUEST', message: 'pickWorkflowFile: takes no payload (the file is chosen in the dialog)' });
    await expect(apiError(pickWorkflowFile(OWN, undefined, deps([bin])))).resolves.toMatchObject({ code: 'BAD_REQUEST', message: 'latin1.yaml is not UTF-8 text' });
    await expect(apiError(pickWorkflowFile(OWN, undefined, deps([txt])))).resolves.toMatchObject({ code: 'BAD_REQUEST', message: 'notes.txt is not a workflow file (.yaml, .yml or .json)' });
  });

  it('crosses IPC on its own channel: the preload side gets the file, or the error with its code', async () => {
    const file = path.join(scratch(), 'ok.yml');
    writeFileSync(file, 'name: ok\n');
    const handlers = new Map<string, (event: IpcInvokeEventLike, ...args: unknown[]) => unknown>();
    let paths = [file];
    const off = registerWorkflowPicker({ handle: (c, l) => void handlers.set(c, l), removeHandler: (c) => void handlers.delete(c) }, { ...deps([]), showOpenDialog: async () => ({ canceled: false, filePaths: paths }) });
    expect([...handlers.keys()]).toEqual([PICK_WORKFLOW_CHANNEL]);
    const ipc = {
      invoke: async (channel: string, ...args: unknown[]) => {
        try {
          return await handlers.get(channel)!(OWN, ...args);
        } catch (err) {
          throw new Error(`Error invoking remote method '${channel}': ${(err as Error).message}`);
        }
      },
      on: () => undefined,
      removeListener: () => undefined,
    };
    const pick = createWorkflowPicker(ipc);
    await expect(pick()).resolves.toEqual({ name: 'ok.yml', text: 'name: ok\n' });
    paths = [path.join(scratch(), 'gone.yaml')];
    await expect(pick().catch((e: Error) => ApiError.fromWire(e))).resolves.toMatchObject({ code: 'NOT_FOUND', message: expect.stringMatching(/^gone\.yaml is gone/) });
    off();
    expect(handlers.size).toBe(0);
  });
});
